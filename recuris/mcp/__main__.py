"""Run the MCP server: `python -m recuris.mcp --db FILE --user ID` (see server.py)."""

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
