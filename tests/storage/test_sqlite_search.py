"""Example tests for recuris.storage.sqlite_search: work follows postings, BM25 in SQL (S8, SX1)."""

import re

import pytest
from sqlite_counting import statements_of
from zipf_corpus import corpus

from recuris import BM25Settings, MemoryItem, MemoryManager, SQLiteStore
from recuris.core.clock import ManualClock
from recuris.retrieval.bm25 import bm25_idf
from recuris.retrieval.scoring import analyze
from recuris.storage.store import TermCounts


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


RARE = "zebra"  # in a dozen of the user's items, and in no unrelated one


def _crowded(unrelated: int) -> SQLiteStore:
    """Return a store of ana's rare-word items among `unrelated` items sharing no word with them.

    The unrelated items are ana's episodes and notes at other levels and bob's items of every
    level, from one Zipf-like vocabulary; ana's rare-word items are episodes of one task, with
    a reply between each two.
    """
    store = SQLiteStore(":memory:")
    levels = ("episodic", "semantic", "working", "procedural")
    store.put(
        [
            MemoryItem(
                id=f"x{n}",
                user_id="bob" if n % 3 == 0 else "ana",
                level="episodic" if n % 3 == 1 else levels[n % 4 if n % 3 == 0 else n % 2],
                content=text,
                task_id=f"t{n // 10}",
                created_at=60.0 * n,
            )
            for n, text in enumerate(corpus(unrelated, prefix="x"))
        ]
    )
    store.put(
        [
            MemoryItem(
                id=f"r{n}",
                user_id="ana",
                level="episodic",
                # Every other turn a reply without the word: the windows read items by id.
                content=f"{RARE} crossing number {n}" if n % 2 == 0 else f"reply number {n}",
                task_id="rare",
                created_at=1e6 + n,
            )
            for n in range(24)
        ]
    )
    return store


@pytest.fixture(scope="module")
def crowds():
    """The same rare-word items among 2,000 and 20,000 unrelated items."""
    return {size: _crowded(size) for size in (2_000, 20_000)}


def _copy(store: SQLiteStore, statistics: bool) -> SQLiteStore:
    copy = SQLiteStore(":memory:")
    store._db.backup(copy._db)
    if statistics:
        copy._db.execute("ANALYZE")  # as `PRAGMA optimize` would: plans may change with them
    return copy


def _shape(statement: str) -> str:
    """Return the statement with its values (texts and numbers) written as `?`."""
    return re.sub(r"'[^']*'|\b\d+(\.\d+)?\b", "?", statement)


def _recall(store: SQLiteStore, task: bool):
    manager = MemoryManager(store, clock=ManualClock(1e7))
    if task:
        manager.start_task("ana", "cross the road safely")
    manager.recall(RARE, "ana", count_access=False)  # the user's layers loaded once, as in use
    return lambda: manager.recall(RARE, "ana", top_k=10, count_access=False)


def _search(store: SQLiteStore, task: bool):
    store.search("ana", "episodic", [RARE], 10)  # the schema read once, as in use
    return lambda: store.search("ana", "episodic", [RARE], 10)


@pytest.mark.parametrize("statistics", [False, True], ids=["no statistics", "analyzed"])
@pytest.mark.parametrize("task", [False, True], ids=["no task", "task in progress"])
@pytest.mark.parametrize("read", [_recall, _search], ids=["recall", "search"])
def test_a_rare_word_costs_the_same_among_ten_times_more_unrelated_items(
    crowds, read, task, statistics
):
    """SX1: every statement of a rare-word read takes at most 1.5x the steps among 10x the items."""
    counted = {}
    for size, store in crowds.items():
        copy = _copy(store, statistics)
        counted[size] = statements_of(copy, read(copy, task))
        copy.close()
    few = counted[2_000]
    many = counted[20_000]
    shapes = [_shape(statement) for statement, _ in few]
    assert shapes == [_shape(statement) for statement, _ in many]
    grown = [
        (steps, more, statement[:200])
        for (statement, steps), (_, more) in zip(few, many, strict=True)
        if more > 1.5 * steps
    ]
    assert grown == []
    assert sum(steps for _, steps in many) < 10_000  # windows included (CX1), a few thousand


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


@pytest.mark.parametrize("statistics", [False, True], ids=["no statistics", "analyzed"])
def test_the_terms_items_hold_cost_the_same_among_ten_times_more_holders(crowds, statistics):
    """SX1, S15: held_terms seeks each named item's postings, never a common term's list."""
    named = [f"x{n}" for n in range(1, 2_000, 3)][:160]  # ana's episodes, in both stores
    counted = {}
    for size, store in crowds.items():
        copy = _copy(store, statistics)
        common = copy._run(
            "SELECT term FROM postings GROUP BY term ORDER BY COUNT(*) DESC LIMIT 3"
        )
        terms = [term for (term,) in common]
        found = copy.held_terms("ana", "episodic", named, terms)
        assert found and set(found) <= set(named)
        counted[size] = sum(
            steps
            for _, steps in statements_of(
                copy, lambda: copy.held_terms("ana", "episodic", named, terms)
            )
        )
        copy.close()
    assert counted[20_000] <= 1.5 * counted[2_000], counted


def test_a_term_held_by_fewer_items_than_are_named_is_read_by_its_postings():
    """SX1, S15: a rare word is read by its postings, a common one item by item, both exact."""
    store = SQLiteStore(":memory:")

    def item(key, user, level, text):
        return MemoryItem(id=key, user_id=user, level=level, content=text)

    # One large batch (its postings merged), then a small one (its postings pending).
    merged = [
        item(f"a{n}", "ana", "episodic", f"deploy {RARE * (n % 40 == 0)} {n}")
        for n in range(1_200)
    ]
    others = [item("b0", "bob", "episodic", f"{RARE} deploy"), item("s0", "ana", "semantic", RARE)]
    store.put(merged + others)
    store.put([item(f"p{n}", "ana", "episodic", f"{RARE} {RARE} deploy") for n in range(3)])
    merged_holders = store._run("SELECT COUNT(*) FROM postings WHERE term = ?", (RARE,))[0][0]
    named = [f"a{n}" for n in range(0, 400, 8)] + ["p0", "p1", "b0", "s0", "gone"]
    assert 0 < merged_holders < len(named) < len(merged)
    found = {}
    ran = statements_of(
        store, lambda: found.update(store.held_terms("ana", "episodic", named, [RARE, "deploy"]))
    )
    statements = [statement for statement, _ in ran]
    assert any(statement.startswith("WITH named") for statement in statements)
    assert any("CROSS JOIN items ON" in statement for statement in statements)
    expected = {}
    for key, held in store.get_many("ana", named).items():
        terms = analyze(held.content)
        counts = {term: terms.count(term) for term in sorted({RARE, "deploy"}) if term in terms}
        if held.level == "episodic" and counts:
            expected[key] = TermCounts(len(terms), counts)
    assert found == expected
    holding = {key for key, held in found.items() if RARE in held.counts}
    assert holding == {f"a{n}" for n in range(0, 400, 40)} | {"p0", "p1"}
