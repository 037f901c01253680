"""Property tests for SQLiteStore: any text round-trips, through a reopen (SQ1, SQ2)."""

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recuris import MemoryItem, SQLiteStore

pytestmark = pytest.mark.slow  # a SQLite file per example: the full run has them

texts = st.text(min_size=1).filter(str.strip) | st.sampled_from(
    ["'; DROP TABLE items; --", "a\x00b", "注册\u200b✓" * 500]
)
metadata = st.dictionaries(
    st.text(max_size=10), st.text(max_size=20) | st.integers() | st.booleans(), max_size=4
)


@given(
    st.lists(
        st.tuples(
            texts,
            texts,
            st.sampled_from(["episodic", "semantic"]),
            metadata,
            st.floats(0, 1),
            st.floats(-1e9, 1e9),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_SQ1_SQ2_any_item_survives_a_reopen_unchanged(rows):
    """SQ1, SQ2: items with hostile text and metadata come back equal after close and reopen."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.db"
        store = SQLiteStore(path)
        items = [
            MemoryItem(
                id=f"i{n}",
                user_id=user,
                level=level,
                content=content,
                metadata=meta,
                importance=importance,
                created_at=created,
            )
            for n, (user, content, level, meta, importance, created) in enumerate(rows)
        ]
        store.put(items)
        store.close()
        reopened = SQLiteStore(path, create=False)
        for written in items:
            assert reopened.get(written.user_id, written.id) == written
        assert reopened.integrity() == "ok"
        reopened.close()


@given(
    st.lists(st.tuples(st.sampled_from(["ana", "bob"]), texts), min_size=1, max_size=10),
    st.text(max_size=40),
)
def test_SH1_S7_matching_equals_a_filtered_list(rows, query):
    """SH1, S7: the term index finds exactly the items sharing an analysed term with the query."""
    from recuris.retrieval.scoring import analyze

    store = SQLiteStore(":memory:")
    store.put(
        [
            MemoryItem(id=f"i{n}", user_id=user, level="episodic", content=content)
            for n, (user, content) in enumerate(rows)
        ]
    )
    terms = set(analyze(query))
    for user in ("ana", "bob"):
        expected = [i.id for i in store.list(user, "episodic") if terms & set(analyze(i.content))]
        assert [i.id for i in store.matching(user, "episodic", terms)] == expected


words = st.lists(
    st.sampled_from("deploy deploys key keys red fish the blue 数据库".split()), max_size=6
)
writes = st.lists(
    st.tuples(
        st.integers(0, 9),
        st.sampled_from(["ana", "bob"]),
        st.sampled_from(["episodic", "semantic"]),
        words.map(" ".join).filter(str.strip),
    ),
    min_size=1,
    max_size=12,
)


@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("put"), writes), st.tuples(st.just("delete"), st.integers(0, 9))
        ),
        max_size=12,
    ),
    st.integers(1, 40),
)
def test_SH1_postings_follow_every_write_whatever_the_pending_limit(operations, limit):
    """SH1: after puts, rewrites and deletes, postings hold each item's terms, scopes their sums."""
    from collections import Counter
    from unittest.mock import patch

    from recuris.retrieval.scoring import analyze
    from recuris.storage import sqlite_schema

    with patch.object(sqlite_schema, "PENDING_LIMIT", limit):  # small limits merge often
        store, owners = SQLiteStore(":memory:"), {}
        for kind, argument in operations:
            if kind == "put":
                batch = [
                    MemoryItem(
                        id=f"i{n}", user_id=owners.setdefault(n, user), level=level, content=content
                    )
                    for n, user, level, content in argument
                ]
                store.put(batch)
            elif argument in owners:
                store.delete(owners[argument], [f"i{argument}"])
    scopes = {
        (user, level): (scope, documents, length)
        for scope, user, level, documents, length in store._run("SELECT * FROM scopes")
    }
    expected, totals = [], Counter()
    for rowid, user, level, content in store._run(
        "SELECT rowid, user_id, level, content FROM items"
    ):
        counts, scope = Counter(analyze(content)), scopes[user, level][0]
        length = sum(counts.values())
        expected += [(scope, term, rowid, frequency, length) for term, frequency in counts.items()]
        totals[scope, "documents"] += 1
        totals[scope, "length"] += length
    columns = "scope, term, item, frequency, length"
    found = store._run(
        f"SELECT {columns} FROM postings UNION ALL SELECT {columns} FROM pending_postings"
    )
    assert sorted(found) == sorted(expected)
    assert store._run("SELECT COUNT(*) FROM pending_postings")[0][0] <= limit
    assert all(
        (totals[scope, "documents"], totals[scope, "length"]) == (documents, length)
        for scope, documents, length in scopes.values()
    )
