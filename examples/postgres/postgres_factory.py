"""The fork kit's factory for the PostgreSQL store: `RECURIS_STORES=postgres_factory:make_store`.

docs/fork-as-a-starter.md §5: a factory takes a fresh, empty folder and returns a new store;
tests/factories.py runs the store contract and the store and manager state machines on it.
Here each folder names its own schema of the database `DATABASE_URL` names, so every test
starts empty and a second call on the same folder reopens the same schema.

Invariants:
    PF1 one folder, one schema (`recuris_test_` and a hash of the folder's path): two tests
        never share a table, and the same folder reopens what was written (`reopens`).
    PF2 every schema a process made is dropped when the process ends, and `drop_test_schemas`
        drops any left by a process that did not end cleanly: the database is left as found.
"""

import atexit
import hashlib
import os
from pathlib import Path

import psycopg
from postgres_store import PostgresStore
from psycopg import sql

PREFIX = "recuris_test_"
_made: set[str] = set()  # the schemas this process made (PF2)


def conninfo() -> str:
    """Return the database to test on, from DATABASE_URL. Raises KeyError naming it if unset."""
    try:
        return os.environ["DATABASE_URL"]
    except KeyError:
        raise KeyError("DATABASE_URL: set it to the PostgreSQL database to test on") from None


def schema_of(folder: Path) -> str:
    """Return the schema of a test's folder (PF1)."""
    return PREFIX + hashlib.sha256(str(Path(folder).resolve()).encode()).hexdigest()[:24]


def make_store(folder: Path) -> PostgresStore:
    """Return a store in the folder's own schema, made empty on the first call (PF1)."""
    schema = schema_of(folder)
    if not _made:
        atexit.register(drop_test_schemas, _made)
    _made.add(schema)
    return PostgresStore(conninfo(), schema)


make_store.reopens = True  # the same folder, the same schema: a second call reopens it


def drop_test_schemas(schemas: set[str] | None = None) -> int:
    """Drop the given test schemas, or every one left in the database; return how many (PF2)."""
    with psycopg.connect(conninfo(), autocommit=True) as connection:
        if schemas is None:
            found = connection.execute(
                "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)", (PREFIX,)
            ).fetchall()
            schemas = {row[0] for row in found}
        for schema in sorted(schemas):
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
            )
    return len(schemas)
