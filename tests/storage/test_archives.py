"""Example tests for recuris.storage.archives: the core's episodes kept in a Store (AR1-AR3)."""

from recuris import Episode, EpisodicMemory, InMemoryStore, SQLiteStore, Step
from recuris.storage.archives import StoredEpisodes


def test_an_episode_reads_back_equal_to_the_one_written(tmp_path):
    """AR1: id, text, trajectory, status and decay fields come back from SQLite unchanged."""
    store = SQLiteStore(tmp_path / "m.db")
    episode = Episode(
        task_type="deploy",
        goal="ship the api",
        status="failed",
        failure_reason="timeout",
        trajectory=(Step(1, "build", "ok"), Step(2, "push", "timeout", True)),
        created_at=5.0,
        importance=0.5,
        access_count=2,
        last_access_at=7.0,
    )
    EpisodicMemory(archive=StoredEpisodes(store, "ana")).add_episode(episode)
    [loaded] = EpisodicMemory(
        archive=StoredEpisodes(SQLiteStore(tmp_path / "m.db"), "ana")
    ).episodes
    assert loaded == episode


def test_an_archive_sees_only_its_own_user():
    """AR3: another user's episodes never load into this user's memory."""
    store = InMemoryStore()
    EpisodicMemory(archive=StoredEpisodes(store, "bob")).add_episode(
        Episode(task_type="t", goal="g", status="success")
    )
    assert len(EpisodicMemory(archive=StoredEpisodes(store, "ana"))) == 0


def test_an_embedding_scorer_s_terms_are_kept_and_reloaded_without_analysing_again():
    """AR1: with a scorer that keeps its terms, a reload takes them from the store, not the analyzer."""
    from recuris.core.similarity import JaccardScorer

    class Counting(JaccardScorer):
        persist = True  # like an embedding scorer: its terms are worth keeping

        def __init__(self):
            super().__init__()
            self.analysed = 0

        def analyzer(self, text):
            self.analysed += 1
            return super().analyzer(text)

    store = InMemoryStore()
    EpisodicMemory(Counting, StoredEpisodes(store, "ana")).add_episode(
        Episode(task_type="deploy", goal="ship the api", status="success")
    )
    reloaded = EpisodicMemory(Counting, StoredEpisodes(store, "ana"))
    assert reloaded.scorer.analysed == 0 and [
        h.episode.goal for h in reloaded.retrieve("ship api", 1, 0.1)
    ] == ["ship the api"]
