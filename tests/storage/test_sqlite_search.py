"""Example tests for recuris.storage.sqlite_search: by index, scored in SQL, LIMIT (S8, SX1)."""

import pytest

from recuris import BM25Settings, MemoryItem, SQLiteStore
from recuris.retrieval.bm25 import bm25_idf
from recuris.retrieval.scoring import analyze
from recuris.storage.sqlite_search import (
    AFTER,
    BEFORE,
    DOCUMENT_FREQUENCY,
    MATCHING,
    found_items_statement,
    marks,
    search_statement,
)


@pytest.fixture
def store():
    store = SQLiteStore(":memory:")
    store.put(
        [
            MemoryItem(
                id=f"i{n}",
                user_id="ana",
                level="episodic",
                content=f"deploy region {n}",
                task_id="t",
            )
            for n in range(50)
        ]
    )
    return store


STATEMENTS = [
    (search_statement(2), ("deploy", 1.0, "region", 1.0, 1.9, 0.9, 0.5, 0.5, 3.0, 1, 10)),
    (
        search_statement(2, "pending_postings"),
        ("deploy", 1.0, "region", 1.0, 1.9, 0.9, 0.5, 0.5, 3.0, 1, 10),
    ),
    (DOCUMENT_FREQUENCY.format(marks(2)), (1, "deploy", "region")),
    (MATCHING.format(marks(1)), (1, "deploy")),
    (BEFORE, ("ana", "episodic", "t", 5)),
    (AFTER, ("ana", "episodic", "t", 5)),
    ("SELECT * FROM items WHERE user_id = ? AND level = ? ORDER BY rowid", ("ana", "episodic")),
]


@pytest.mark.parametrize("statement, parameters", STATEMENTS, ids=lambda value: str(value)[:40])
def test_every_search_statement_reads_through_an_index(store, statement, parameters):
    """SX1: SQLite's plan searches items and postings by key; it scans only pending postings."""
    plan = [row[3] for row in store._db.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)]
    scanned = {step.split()[1] for step in plan if step.startswith("SCAN")}
    assert scanned & {"items", "postings", "scopes"} == set()
    assert any("postings" in step or "items" in step for step in plan)


def test_search_returns_only_the_limit_best_scored_in_sql(store):
    """S8: ten of fifty matching items come back, best first, ties to the later-written item."""
    found = store.search("ana", "episodic", ["deploy"], 10)
    assert len(found) == 10 and [item.id for item, _ in found] == [
        f"i{n}" for n in range(49, 39, -1)
    ]


def test_a_user_sees_only_their_own_statistics():
    """S8: another user's many items change neither the results nor the scores of this user."""
    alone = SQLiteStore(":memory:")
    crowded = SQLiteStore(":memory:")
    mine = [
        MemoryItem(id="a1", user_id="ana", level="episodic", content="deploy region eu"),
        MemoryItem(id="a2", user_id="ana", level="episodic", content="rotate keys"),
    ]
    alone.put(mine)
    crowded.put(
        mine
        + [
            MemoryItem(id=f"b{n}", user_id="bob", level="episodic", content="deploy deploy")
            for n in range(30)
        ]
    )
    assert alone.search("ana", "episodic", ["deploy"], 5) == crowded.search(
        "ana", "episodic", ["deploy"], 5
    )


@pytest.mark.parametrize("settings", [BM25Settings(), BM25Settings(k1=1.2, b=0.75)])
def test_the_sql_weight_is_the_python_definition(settings):
    """S8: the score summed in SQL is the sum of BM25Settings.weights, with the store's settings."""
    store = SQLiteStore(":memory:", bm25=settings)
    texts = {"a": "deploy deploy region", "b": "deploy api", "c": "rotate keys now please"}
    store.put(
        [
            MemoryItem(id=key, user_id="ana", level="episodic", content=text)
            for key, text in texts.items()
        ]
    )
    lengths = {key: len(analyze(text)) for key, text in texts.items()}
    average = sum(lengths.values()) / len(lengths)
    idf = bm25_idf(3, 2)
    [weight_a] = settings.weights(idf, [2], [lengths["a"]], average)
    [weight_b] = settings.weights(idf, [1], [lengths["b"]], average)
    found = [(item.id, score) for item, score in store.search("ana", "episodic", ["deploy"], 5)]
    assert found == [("a", round(weight_a, 9)), ("b", round(weight_b, 9))]


@pytest.mark.parametrize("count", [1, 10, 50])
def test_the_found_items_are_read_by_key_not_through_the_users_index(store, count):
    """SX1: the rows `search` found are read by rowid, never by the user's index (all rows)."""
    statement = found_items_statement(count)
    parameters = (*range(1, count + 1), "ana")
    plan = [row[3] for row in store._db.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)]
    assert plan == ["SEARCH items USING INTEGER PRIMARY KEY (rowid=?)"]


def test_scores_are_naive_bm25_when_a_terms_postings_sit_in_both_tables():
    """S8, SH1: a term with postings merged and postings still pending scores as naive BM25."""
    store = SQLiteStore(":memory:")
    texts = {f"m{n}": f"deploy region {n} service" for n in range(400)}
    store.put(
        [MemoryItem(id=key, user_id="ana", level="episodic", content=t) for key, t in texts.items()]
    )
    for n in range(5):  # small writes after the merge: their postings wait
        key = f"p{n}"
        texts[key] = f"deploy deploy rollback {n}"
        store.put([MemoryItem(id=key, user_id="ana", level="episodic", content=texts[key])])
    tables = {
        table: store._db.execute(f"SELECT COUNT(*) FROM {table} WHERE term = 'deploy'").fetchone()
        for table in ("postings", "pending_postings")
    }
    assert tables["postings"][0] > 0 and tables["pending_postings"][0] > 0
    settings = BM25Settings()
    terms = {key: analyze(text) for key, text in texts.items()}
    average = sum(map(len, terms.values())) / len(terms)
    holding = [key for key, found in terms.items() if "deploy" in found]
    idf = bm25_idf(len(terms), len(holding))
    naive = {
        key: round(
            settings.weights(idf, [terms[key].count("deploy")], [len(terms[key])], average)[0], 9
        )
        for key in holding
    }
    found = store.search("ana", "episodic", ["deploy"], 10)
    written = {key: order for order, key in enumerate(texts)}  # ties go to the later write
    expected = sorted(naive.items(), key=lambda pair: (-pair[1], -written[pair[0]]))
    assert [(item.id, score) for item, score in found] == expected[:10]
