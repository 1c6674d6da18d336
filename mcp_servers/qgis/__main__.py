from mcp_servers.qgis.server import main

main()
