from mcp_servers.obs.server import main

main()
