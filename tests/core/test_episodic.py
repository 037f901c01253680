"""Example tests for recuris.core.episodic.EpisodicMemory (E1-E5)."""

import pytest

from recuris import Episode, EpisodicMemory


def episode(goal, task_type="web form", status="success", created_at=0.0, **fields):
    reason = "error" if status == "failed" else ""
    return Episode(
        task_type=task_type,
        goal=goal,
        status=status,
        failure_reason=reason,
        created_at=created_at,
        **fields,
    )


@pytest.fixture
def memory():
    memory = EpisodicMemory()
    memory.add_episode(episode("register an account", created_at=1))
    memory.add_episode(episode("export the sales report", task_type="report", created_at=2))
    memory.add_episode(episode("注册一个新账号", task_type="网页表单填写", created_at=3))
    return memory


def test_ids_are_assigned_in_insertion_order(memory):
    """E5: an empty id becomes episode-N."""
    assert [e.id for e in memory.episodes] == ["episode-1", "episode-2", "episode-3"]


def test_duplicate_id_is_refused_and_nothing_changes(memory):
    """E5: storing a second episode under a used id raises and stores nothing."""
    with pytest.raises(ValueError, match="E5"):
        memory.add_episode(episode("other", id="episode-1"))
    assert len(memory) == 3 and memory.get("episode-1").goal == "register an account"


def test_assigned_ids_skip_ids_chosen_by_callers():
    """E5: an automatic id never collides with one a caller chose."""
    memory = EpisodicMemory()
    memory.add_episode(episode("a", id="episode-2"))
    memory.add_episode(episode("b"))
    memory.add_episode(episode("c"))
    assert [e.id for e in memory.episodes] == ["episode-2", "episode-1", "episode-3"]


def test_retrieval_matches_on_goal_not_only_task_type(memory):
    """The prototype compared with task_type alone; the goal's words count too."""
    hits = memory.retrieve("sales report", top_k=1, threshold=0.1)
    assert [hit.episode.id for hit in hits] == ["episode-2"]


def test_chinese_goal_retrieves_a_similar_chinese_episode(memory):
    """T1 in retrieval: CJK bigrams let a Chinese query find a Chinese episode."""
    hits = memory.retrieve("网页表单填写 再注册一个测试账号", top_k=2, threshold=0.25)
    assert [hit.episode.id for hit in hits] == ["episode-3"]


def test_below_threshold_is_dropped_not_padded(memory):
    """E2: with a high threshold nothing weak comes back, even if top_k is larger."""
    assert memory.retrieve("account", top_k=5, threshold=0.9) == []


def test_at_most_top_k_hits(memory):
    """E1: no more than top_k hits."""
    assert (
        len(memory.retrieve("register account report sales web form", top_k=1, threshold=0.0)) == 1
    )


def test_ties_go_to_the_newer_episode():
    """E3: equal scores are ordered newer first."""
    memory = EpisodicMemory()
    memory.add_episode(episode("deploy service", created_at=5))
    memory.add_episode(episode("deploy service", created_at=9))
    assert [h.episode.created_at for h in memory.retrieve("deploy service", top_k=2)] == [9, 5]


def test_empty_query_returns_no_hits(memory):
    """E2: an empty query, or one with no tokens, shares no term and retrieves nothing."""
    assert memory.retrieve("") == [] and memory.retrieve("!!! ...") == []


@pytest.mark.parametrize("top_k", [0, -3, 1.5, True])
def test_top_k_must_be_a_positive_int(memory, top_k):
    """E1: top_k < 1 is refused, naming the rule."""
    with pytest.raises(ValueError, match="top_k"):
        memory.retrieve("account", top_k=top_k)


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan")])
def test_threshold_must_lie_in_unit_interval(memory, threshold):
    """E2: a threshold outside [0, 1] is refused, naming the rule."""
    with pytest.raises(ValueError, match="threshold"):
        memory.retrieve("account", threshold=threshold)


def test_remove_takes_an_episode_out_of_the_index(memory):
    """A removed episode is no longer retrieved, and unknown ids are ignored."""
    removed = memory.remove(["episode-2", "no-such-id"])
    assert [e.id for e in removed] == ["episode-2"]
    assert memory.retrieve("sales report", threshold=0.0) == []


def test_indexed_retrieval_matches_the_scan(memory):
    """E4: the inverted index returns what a linear scan returns."""
    for query in ["register", "sales report", "注册账号", "web form account"]:
        assert memory.retrieve(query, 3, 0.0) == memory.retrieve_by_scan(query, 3, 0.0)


def test_add_episode_refuses_a_dict():
    """add_episode takes Episode records only (the prototype took dicts)."""
    with pytest.raises(TypeError, match="Episode"):
        EpisodicMemory().add_episode({"goal": "x"})


def test_a_hit_scoring_exactly_the_threshold_is_kept():
    """E2: the threshold is inclusive: a score equal to it comes back; just above it, none does."""
    memory = EpisodicMemory()
    memory.add_episode(episode("alpha beta", task_type="gamma delta"))  # four tokens
    [hit] = memory.retrieve("alpha", top_k=1, threshold=0.25)  # Jaccard 1/4 exactly
    assert hit.score == 0.25
    assert memory.retrieve("alpha", top_k=1, threshold=0.2500001) == []


def test_the_retrieval_settings_write_the_defaults_once_and_check_them():
    """E1, E2: RetrievalSettings holds top_k 2 and threshold 0.25 and refuses bad values."""
    from recuris import RetrievalSettings

    assert RetrievalSettings() == RetrievalSettings(2, 0.25)
    with pytest.raises(ValueError, match="E1: top_k"):
        RetrievalSettings(top_k=0)
    with pytest.raises(ValueError, match="E2: threshold"):
        RetrievalSettings(threshold=float("nan"))


def test_the_scorer_is_a_factory_and_each_memory_makes_its_own():
    """E4: `scorer` is called once per memory, so two memories never share an index."""
    from recuris.core.similarity import JaccardScorer

    first = EpisodicMemory(scorer=JaccardScorer)
    second = EpisodicMemory(scorer=JaccardScorer)
    first.add_episode(episode("register an account"))
    assert first.scorer is not second.scorer and len(second.scorer) == 0
