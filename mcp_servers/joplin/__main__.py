from mcp_servers.joplin.server import main

main()
