"""Run the MCP server: `python -m recuris.mcp --db FILE --user ID` (see server.py)."""

import sys

from ..manager.entry import run_piped


def command() -> int:
    """Load the server and run it; Ctrl-C while it loads ends it as EN1 says (EN2)."""
    from .server import main

    return main()


if __name__ == "__main__":
    sys.exit(run_piped(command))
