"""The recuris command line on a fork's own store: the lines docs/fork-as-a-starter.md §5 shows.

recuris/manager/cli.py opens every database as `SQLiteStore(path, create=..., timeout=...,
read_only=...)`, a name it imports: as shipped, the command line knows SQLite files only. A
fork binds that one name to an opener of its own store and runs `main` unchanged. This
fork's store is tests/fork_store.py's ForkStore, here over a SQLite file so that one command
finds what the last one wrote; `stats` also asks the store for `integrity()`, passed on.
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
    cli.SQLiteStore = open_store  # the one name through which the command line opens a database
    sys.exit(cli.main())
