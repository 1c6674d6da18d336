"""Built-in tools: computer (GUI), bash and the file editor."""
