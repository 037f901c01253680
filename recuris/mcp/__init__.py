"""The MCP server: one user's memory for any agent, over stdio or Streamable HTTP."""
