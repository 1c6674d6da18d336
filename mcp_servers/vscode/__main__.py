from mcp_servers.vscode.server import main

main()
