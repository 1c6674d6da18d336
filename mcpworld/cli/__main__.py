from mcpworld.cli import app

app()
