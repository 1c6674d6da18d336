from mcp_servers.blender.server import main

main()
