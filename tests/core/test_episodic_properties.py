"""EpisodicMemory checked against a linear scan and a naive list model (E1-E5)."""

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, precondition, rule

from recuris import Episode, EpisodicMemory, jaccard, tokenize

words = st.sampled_from(
    ["deploy", "service", "report", "sales", "form", "注册", "账号", "database", "migrate"]
)
phrases = st.lists(words, min_size=1, max_size=4).map(" ".join)
queries = st.lists(words, max_size=4).map(" ".join)
thresholds = st.floats(0.0, 1.0)


def make(task_type, goal, created_at):
    return Episode(task_type=task_type, goal=goal, status="success", created_at=created_at)


@given(
    st.lists(st.tuples(phrases, phrases, st.integers(0, 5)), max_size=20),
    queries,
    st.integers(1, 6),
    thresholds,
)
def test_E1_E2_E3_E4_retrieve_equals_a_naive_sort(specs, query, top_k, threshold):
    """E1-E4: the indexed result equals scoring every episode and sorting naively."""
    memory = EpisodicMemory()
    stored = [memory.add_episode(make(t, g, c)) for t, g, c in specs]
    tokens = set(tokenize(query))
    naive = [
        (jaccard(tokens, tokenize(f"{e.task_type} {e.goal}")), e.created_at, order, e)
        for order, e in enumerate(stored)
    ]
    naive = [row for row in naive if row[0] > 0 and row[0] >= threshold]
    naive.sort(key=lambda row: (-row[0], -row[1], -row[2]))
    hits = memory.retrieve(query, top_k, threshold)
    assert [(h.score, h.episode.id) for h in hits] == [(row[0], row[3].id) for row in naive[:top_k]]
    assert hits == memory.retrieve_by_scan(query, top_k, threshold)


class EpisodicMachine(RuleBasedStateMachine):
    """Adds and removals on the real memory, next to a plain dict of what should be stored."""

    ids = Bundle("ids")

    def __init__(self):
        super().__init__()
        self.memory = EpisodicMemory()
        self.model = {}

    @rule(target=ids, task_type=phrases, goal=phrases, created_at=st.integers(0, 3))
    def add(self, task_type, goal, created_at):
        episode = self.memory.add_episode(make(task_type, goal, created_at))
        self.model[episode.id] = episode
        return episode.id

    @precondition(lambda self: self.model)
    @rule(episode_id=ids)
    def remove(self, episode_id):
        self.memory.remove([episode_id])
        self.model.pop(episode_id, None)

    @rule(query=queries, top_k=st.integers(1, 5), threshold=thresholds)
    def retrieve(self, query, top_k, threshold):
        hits = self.memory.retrieve(query, top_k, threshold)
        assert hits == self.memory.retrieve_by_scan(query, top_k, threshold)  # E4
        assert len(hits) <= top_k  # E1
        assert all(hit.score >= threshold and hit.score > 0 for hit in hits)  # E2
        keys = [(-h.score, -h.episode.created_at) for h in hits]
        assert keys == sorted(keys)  # E3
        assert all(hit.episode.id in self.model for hit in hits)

    @invariant()
    def E5_ids_are_unique_and_match_the_model(self):
        assert [e.id for e in self.memory.episodes] == list(self.model)

    @invariant()
    def E4_index_holds_exactly_the_stored_episodes(self):
        postings = self.memory.scorer.postings
        indexed = set().union(*postings.values()) if postings else set()
        assert indexed == set(self.model)


TestEpisodicMachine = EpisodicMachine.TestCase
