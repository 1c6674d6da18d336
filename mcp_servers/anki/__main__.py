from mcp_servers.anki.server import main

main()
