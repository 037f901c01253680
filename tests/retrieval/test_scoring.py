"""Example tests for recuris.retrieval.scoring: the inverted index, Jaccard and BM25 (SR1-SR5)."""

import math

import pytest

from recuris.retrieval.bm25 import BM25Settings
from recuris.retrieval.scoring import BM25Scorer, analyze, query_problem, stem

STEMS = [
    ("deployments", "deploy"),
    ("comment", "comment"),
    ("deployed", "deploy"),
    ("deploying", "deploy"),
    ("running", "run"),
    ("making", "mak"),
    ("make", "mak"),
    ("class", "class"),
    ("analysis", "analysis"),
    ("quickly", "quick"),
    ("go", "go"),
    ("注册", "注册"),
]


@pytest.mark.parametrize("word, expected", STEMS)
def test_the_light_stemmer_joins_common_forms(word, expected):
    """SR3: plural, past, gerund and adverb forms meet their base; short, non-Latin words stay."""
    assert stem(word) == expected


def test_analyze_drops_stop_words_and_keeps_cjk_bigrams():
    """SR3: question words go, content words are stemmed, Chinese is bigrammed."""
    assert analyze("What did Caroline research about adoption agencies? 注册账号") == [
        "carolin",
        "research",
        "adoption",
        "agency",
        "注册",
        "册账",
        "账号",
    ]


def test_bm25_matches_the_okapi_formula():
    """SR1: a hand-computed Okapi score, divided by the query's best possible score."""
    scorer = BM25Scorer(BM25Settings(k1=1.2, b=0.75), analyzer=str.split)
    scorer.add("a", ["red", "apple", "red"])
    scorer.add("b", ["green", "pear"])
    idf = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    norm = 1 - 0.75 + 0.75 * 3 / 2.5
    raw = idf * 2 * 2.2 / (2 + 1.2 * norm)
    assert scorer.raw(["red"], "a") == pytest.approx(raw)
    assert scorer.score(["red"], "a") == pytest.approx(raw / (idf * 2.2))


def test_scores_lie_in_the_unit_interval_and_are_zero_without_a_shared_term():
    """SR1: and only the documents sharing a term are candidates."""
    scorer = BM25Scorer(analyzer=str.split)
    scorer.add("a", ["x", "y"])
    scorer.add("b", ["z"])
    assert scorer.score(["x"], "b") == 0.0 and 0.0 < scorer.score(["x", "y"], "a") <= 1.0
    assert [key for key, _ in scorer.score_candidates(["x"])] == ["a"]


def test_removing_a_document_restores_the_index():
    """SR2: add then remove leaves postings and lengths as they were."""
    scorer = BM25Scorer(analyzer=str.split)
    scorer.add("a", ["x", "y"])
    before = ({term: scorer.holding(term) for term in scorer.postings}, scorer.total_length)
    scorer.add("b", ["y", "z"])
    scorer.remove("b")
    assert ({term: scorer.holding(term) for term in scorer.postings}, scorer.total_length) == before


def test_a_scorer_ranks_with_the_product_defaults_unless_given_settings():
    """B3: a scorer built without settings weighs as BM25Settings() says, as the stores do."""
    from recuris import InMemoryStore

    assert BM25Scorer().settings == BM25Settings() == InMemoryStore().bm25
    assert BM25Scorer(BM25Settings(k1=1.2, b=0.75)).settings.k1 == 1.2


def test_episodic_memory_retrieves_with_bm25():
    """BM25 plugs into episodic retrieval; stemming finds 'deploying' for 'deployments'."""
    from recuris import Episode, EpisodicMemory

    memory = EpisodicMemory(scorer=BM25Scorer)
    memory.add_episode(
        Episode(task_type="ops", goal="deploying the api to staging", status="success")
    )
    memory.add_episode(
        Episode(task_type="ops", goal="rotating the database passwords", status="success")
    )
    [hit] = memory.retrieve("api deployments", top_k=2, threshold=0.1)
    assert hit.episode.goal == "deploying the api to staging"
    assert memory.retrieve("api deployments", 2, 0.1) == memory.retrieve_by_scan(
        "api deployments", 2, 0.1
    )


def test_a_rarer_term_weighs_more():
    """SR1: on documents of equal length, the document holding the rarer query term ranks first."""
    scorer = BM25Scorer(analyzer=str.split)
    for key, terms in {
        "common": ["red", "x"],
        "rare": ["blue", "x"],
        "c2": ["red", "y"],
        "c3": ["red", "z"],
    }.items():
        scorer.add(key, terms)
    assert scorer.idf("blue") > scorer.idf("red")
    ranked = sorted(scorer.score_candidates(["red", "blue"]), key=lambda pair: -pair[1])
    assert ranked[0][0] == "rare" and ranked[0][1] > ranked[1][1]


def test_SR3_a_long_word_stems_as_a_short_one_and_is_not_remembered():
    """SR3: a word past LONGEST_REMEMBERED letters stems alike but never enters the memo."""
    from recuris.retrieval import scoring

    scoring.forget_words()
    root = "b" + "ab" * (scoring.LONGEST_REMEMBERED // 2)
    assert stem(f"{root}ings") == root
    assert stem("deployments") == "deploy"
    assert scoring._remembered.cache_info().currsize == 1  # "deployments" alone


def test_forgetting_a_user_empties_the_memo_of_stems():
    """MG3: after forget_user, no word stays in the process's memo of stemmed words."""
    from recuris import MemoryManager
    from recuris.retrieval import scoring

    manager = MemoryManager()
    manager.write("the deployments of the lighthouse", "ana", level="episodic")
    manager.recall("lighthouse deployments", "ana")
    assert scoring._remembered.cache_info().currsize > 0
    manager.forget_user("ana")
    assert scoring._remembered.cache_info().currsize == 0


def test_a_query_analyze_keeps_no_term_of_is_named_a_problem():
    """SR5: query_problem names a query of stop words or punctuation alone, and no other."""
    assert "has no word to search for" in query_problem("the of and !!!")
    assert query_problem("the deploy") is None
