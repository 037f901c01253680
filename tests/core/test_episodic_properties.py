"""EpisodicMemory checked against a linear scan and a naive list model (E1-E5)."""

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, precondition, rule

from recuris import Episode, EpisodicMemory, tokenize

words = st.sampled_from(
    ["deploy", "service", "report", "sales", "form", "注册", "账号", "database", "migrate"]
)
phrases = st.lists(words, min_size=1, max_size=4).map(" ".join)
queries = st.lists(words, max_size=4).map(" ".join)
thresholds = st.floats(0.0, 1.0)


def naive_jaccard(query_tokens, text):
    """The reference for E4, written here and not imported: a scorer cannot pass by agreeing with itself."""
    a, b = set(query_tokens), set(tokenize(text))
    return len(a & b) / len(a | b) if a and b else 0.0


def naive_ranking(episodes, query, top_k, threshold):
    """Score every (episode, insertion order) naively; keep those above 0 and the threshold; sort as E3 says."""
    rows = [(naive_jaccard(tokenize(query), f"{e.task_type} {e.goal}"), e.created_at, order, e.id)
            for order, e in episodes]
    rows = sorted((row for row in rows if row[0] > 0 and row[0] >= threshold), key=lambda r: (-r[0], -r[1], -r[2]))
    return [(score, episode_id) for score, _, _, episode_id in rows[:top_k]]


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
    hits = memory.retrieve(query, top_k, threshold)
    assert [(h.score, h.episode.id) for h in hits] == naive_ranking(enumerate(stored), query, top_k, threshold)
    assert hits == memory.retrieve_by_scan(query, top_k, threshold)


class EpisodicMachine(RuleBasedStateMachine):
    """Adds and removals on the real memory, next to a plain dict of what should be stored."""

    ids = Bundle("ids")

    def __init__(self):
        super().__init__()
        self.memory = EpisodicMemory()
        self.model = {}
        self.order = {}  # id -> insertion number, the E3 tie-break

    @rule(target=ids, task_type=phrases, goal=phrases, created_at=st.integers(0, 3))
    def add(self, task_type, goal, created_at):
        episode = self.memory.add_episode(make(task_type, goal, created_at))
        self.model[episode.id] = episode
        self.order[episode.id] = len(self.order)
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
        episodes = [(self.order[i], e) for i, e in self.model.items()]
        assert [(h.score, h.episode.id) for h in hits] == naive_ranking(episodes, query, top_k, threshold)
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
        assert len(self.memory.scorer) == len(self.model)


TestEpisodicMachine = EpisodicMachine.TestCase
