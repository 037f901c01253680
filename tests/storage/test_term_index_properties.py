"""The term index against the scan it replaces: search, matching, order and neighbours (TI1, TI2).

The model keeps the items with their write positions (a rewrite keeps one, a deletion loses
it) and answers `search` as the index once did: every item of the scope scored by a BM25
index built from scratch (`accumulate`), rounded to SCORE_DIGITS decimals, sorted by score and then
by the later write position. Rewrites that change an item's text, level or task give its BM25
document a new insertion number but keep its write position: where the two orders part.
"""

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from recuris import MemoryItem
from recuris.retrieval import bm25
from recuris.retrieval.bm25 import BM25Index, BM25Settings
from recuris.retrieval.scoring import analyze
from recuris.storage import term_index
from recuris.storage.store import SCORE_DIGITS
from recuris.storage.term_index import TermIndex

WORDS = "deploy keys red".split()  # few words, so that equal scores are common
ids = st.sampled_from([f"m{n}" for n in range(5)])
contents = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
levels = st.sampled_from(["episodic", "semantic"])
tasks = st.sampled_from([None, "t"])
queries = st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=3)
SETTINGS = BM25Settings()


def thread_of(item):
    """Return what files the item in its thread: its user, level and task."""
    return (item.user_id, item.level, item.task_id)


class TermIndexMachine(RuleBasedStateMachine):
    """Writes, rewrites and deletions on one user's items, next to the model."""

    def __init__(self):
        super().__init__()
        self.kept = (bm25.IMPACT, bm25.FEW, bm25.SPARE, bm25.DEAD, term_index.BLOCK)
        bm25.IMPACT = 2  # impact orders and renumbering even in a small collection
        bm25.FEW = 0
        bm25.SPARE = 1
        bm25.DEAD = 1
        term_index.BLOCK = 4  # threads of several blocks
        self.index = TermIndex(SETTINGS)
        self.items: dict[str, MemoryItem] = {}
        self.positions: dict[str, int] = {}
        self.written = 0

    def teardown(self):
        (bm25.IMPACT, bm25.FEW, bm25.SPARE, bm25.DEAD, term_index.BLOCK) = self.kept

    @rule(id=ids, content=contents, level=levels, task=tasks)
    def write(self, id, content, level, task):
        item = MemoryItem(id=id, user_id="ana", level=level, content=content, task_id=task)
        position = None
        if id in self.items:
            position = self.index.remove(id, thread_of(self.items[id]))
            assert position == self.positions[id]
        else:
            self.positions[id] = self.written
            self.written += 1
        self.index.add(item, position)
        self.items[id] = item

    @precondition(lambda self: self.items)
    @rule(data=st.data())
    def delete(self, data):
        id = data.draw(st.sampled_from(sorted(self.items)))
        self.index.remove(id, thread_of(self.items.pop(id)), forget_position=True)
        del self.positions[id]

    def scope(self, level):
        return [item for item in self.items.values() if item.level == level]

    @rule(level=levels, query=queries, limit=st.integers(0, 9))
    def TI2_search_equals_scoring_every_item(self, level, query, limit):
        terms = analyze(" ".join(query))
        fresh = BM25Index(SETTINGS)
        for item in self.scope(level):
            fresh.add(item.id, analyze(item.content))
        accumulated = fresh.accumulate(terms).items()
        scored = [(key, round(score, SCORE_DIGITS)) for key, score in accumulated]
        scored.sort(key=lambda pair: (-pair[1], -self.positions[pair[0]]))
        assert self.index.search("ana", level, terms, limit) == scored[:limit]

    @rule(level=levels, query=queries)
    def TI1_matching_is_every_item_sharing_a_term_in_write_order(self, level, query):
        terms = set(analyze(" ".join(query)))
        expected = [
            item.id
            for item in sorted(self.scope(level), key=lambda item: self.positions[item.id])
            if terms & set(analyze(item.content))
        ]
        assert self.index.matching("ana", level, terms) == expected

    @invariant()
    def TI1_threads_and_neighbours_follow_write_order(self):
        ordered = sorted(self.items.values(), key=lambda item: self.positions[item.id])
        assert self.index.listed("ana") == [item.id for item in ordered]
        for item in ordered:
            thread = [
                other.id
                for other in ordered
                if (other.level, other.task_id) == (item.level, item.task_id)
            ]
            at = thread.index(item.id)
            before = thread[at - 1] if at > 0 else None
            after = thread[at + 1] if at + 1 < len(thread) else None
            assert self.index.adjacent(item.id, thread_of(item)) == (before, after)


TestTermIndexMachine = TermIndexMachine.TestCase


@given(
    st.lists(st.integers(0, 5_000), min_size=1, max_size=2_500, unique=True),
    st.data(),
)
def test_TI3_a_thread_gives_the_neighbours_a_sorted_list_would_across_its_blocks(positions, data):
    """TI3: `around` answers as a sorted list of the positions held, padded with None."""
    thread = term_index.Thread()
    for position in positions:
        thread.add(position)
    halves = st.lists(st.sampled_from(positions), unique=True, max_size=len(positions) // 2)
    removed = data.draw(halves)
    for position in removed:
        thread.remove(position)
    held = sorted(set(positions) - set(removed))
    position = data.draw(st.sampled_from(held))
    width = data.draw(st.integers(0, 600))
    at = held.index(position)
    padded = [None] * width + held + [None] * width
    assert thread.around(position, width) == (
        *padded[at : at + width],
        *padded[at + width + 1 : at + 2 * width + 1],
    )
