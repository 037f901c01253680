"""The recuris command line on a fork's own store: the lines docs/fork-as-a-starter.md §5 shows.

recuris/manager/cli.py opens every database through `main(open_store=...)`, called as
`open_store(path, create=..., timeout=..., read_only=...)` and `SQLiteStore` by default (V10).
A fork passes an opener of its own store and gets the whole command line. This fork's store
is tests/fork_store.py's ForkStore, here over a SQLite file so that one command finds what
the last one wrote; `stats` also asks the store for `integrity()`, passed on.
tests/test_fork_kit.py runs it as `python tests/fork_cli.py COMMAND ... --db FILE`.
"""

import sys

from recuris import SQLiteStore
from recuris.manager import cli

from fork_store import ForkStore


def open_store(path, create=True, timeout=5.0, read_only=False):
    """Open the fork's store at `path`, as the command line asks (and say so, for the test)."""
    print(f"opened {path} as a ForkStore", file=sys.stderr)
    return ForkStore(SQLiteStore(path, create=create, timeout=timeout, read_only=read_only))


if __name__ == "__main__":
    sys.exit(cli.main(open_store=open_store))
