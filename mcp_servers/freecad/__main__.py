from mcp_servers.freecad.server import main

main()
