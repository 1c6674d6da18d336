from mcp_servers.qbittorrent.server import main

main()
