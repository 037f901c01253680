"""Example tests for recuris.manager.recall: breakdowns, ranking, budgets, use counted (Q1-Q9)."""

import pytest
from power_law import PowerLaw
from sqlite_counting import commits_of

from dataclasses import fields

from recuris import DecayManager, DecaySettings, MemoryItem, MemoryManager, RecallPolicy
from recuris import SQLiteStore, Weights
from recuris.core.clock import ManualClock
from recuris.manager.manager import ManagerSettings
from recuris.core.text import estimate_tokens
from recuris.manager.recall import Candidate, Scale, assemble, rank, score, terms

DAY = 86_400.0


def item(id, content, level="semantic", importance=0.5, created_at=0.0, **fields):
    return MemoryItem(
        id=id,
        user_id="ana",
        level=level,
        content=content,
        importance=importance,
        created_at=created_at,
        **fields,
    )


def scored(memory, relevance, now=0.0, weights=Weights(), half_life=DAY, reason=""):
    """Score one candidate on a scale whose best raw relevance is 1."""
    return score(Candidate(memory, relevance, reason), Scale(now, 1.0, half_life), weights)


def test_total_is_the_weighted_sum_of_its_parts():
    """Q1: total = 0.75·relevance + 0.1·recency + 0.15·importance with the default weights."""
    result = scored(item("a", "x", importance=0.4), 0.3, now=7 * DAY, half_life=7 * DAY)
    breakdown = result.breakdown()
    parts = [breakdown["relevance"], breakdown["recency"], breakdown["importance"]]
    assert parts == [0.3, 0.5, 0.4]
    assert breakdown["total"] == pytest.approx(0.75 * 0.3 + 0.1 * 0.5 + 0.15 * 0.4)


def test_relevance_alone_does_not_decide():
    """Q1: the weighted total ranks, not relevance alone: a fresher, weightier item can win."""
    old = scored(item("old", "x", importance=0.1), 0.6, now=60 * DAY, half_life=7 * DAY)
    new_item = item("new", "x", importance=0.9, created_at=60 * DAY)
    new = scored(new_item, 0.5, now=60 * DAY, half_life=7 * DAY)
    assert [r.item.id for r in rank([old, new])] == ["new", "old"]


def test_assemble_skips_what_does_not_fit_and_keeps_order():
    """Q1: the assembled text stays within the budget; a smaller later item may still fit."""
    big = scored(item("big", "word " * 200), 1.0)
    small = scored(item("small", "tiny"), 0.5)
    chosen, text = assemble(rank([big, small]), token_budget=20)
    assert [r.item.id for r in chosen] == ["small"] and estimate_tokens(text) <= 20


def test_weights_must_be_non_negative_and_not_all_zero():
    """Q2: bad weights are refused."""
    with pytest.raises(ValueError, match="Q2"):
        Weights(relevance=-1)
    with pytest.raises(ValueError, match="Q2"):
        Weights(**{term.name: 0 for term in fields(Weights)})


def test_weights_are_given_by_name_only():
    """Q8: a weight given by position raises TypeError, so a new term cannot shift the others."""
    with pytest.raises(TypeError):
        Weights(0, 0, 0, 0, 0)
    with pytest.raises(TypeError):
        Weights(1.0)


def test_an_ablation_keeps_exactly_the_terms_it_names():
    """Q8: Weights.only keeps the named terms at their defaults and every other term at 0."""
    kept = Weights.only("relevance", "context")
    default = Weights()
    for term in fields(Weights):
        named = term.name in ("relevance", "context")
        assert getattr(kept, term.name) == (getattr(default, term.name) if named else 0.0)


def test_an_ablation_naming_no_term_of_the_weights_is_refused():
    """Q8: a name that is not a term of the weights raises ValueError naming Q8."""
    with pytest.raises(ValueError, match="Q8"):
        Weights.only("relevance", "freshness")


def test_recency_falls_along_the_scales_curve():
    """Q9: recency is the scale's forgetting curve: 1 / (1 + t / h) is 1/4 at three half-lives."""
    scale = Scale(3 * DAY, 1.0, DAY, curve=PowerLaw(exponent=1.0))
    assert terms(Candidate(item("a", "x"), 1.0, ""), scale)["recency"] == pytest.approx(0.25)


def test_the_manager_recalls_with_its_decays_curve():
    """Q9: a manager whose decay has another curve ranks recency along that curve."""
    clock = ManualClock(0.0)
    decay = DecayManager(DecaySettings(curve=PowerLaw(exponent=1.0)), clock=clock)
    # A fixed half-life: stretched to the only candidate's age, any curve would give 1/2 (CA3).
    policy = RecallPolicy(stretch_half_life=False)
    manager = MemoryManager(clock=clock, decay=decay, settings=ManagerSettings(recall=policy))
    manager.write("the zebra crossing", "ana", level="semantic")
    clock.advance(21 * DAY)  # three of recall's 7-day half-lives
    [found] = manager.recall("zebra", "ana", count_access=False).results
    assert found.breakdown()["recency"] == pytest.approx(0.25)


def test_the_same_content_is_assembled_once():
    """Q3: a fact and an event with the same text appear once, the better-ranked copy."""
    fact = scored(item("f1", "Deploy region: EU-west", importance=0.9), 1.0, reason="fact")
    event = scored(item("e1", "deploy region:  eu-west", level="episodic"), 1.0, reason="event")
    chosen, text = assemble(rank([event, fact]), None)
    assert [r.item.id for r in chosen] == ["f1"] and text.count("\n") == 0


def test_the_terms_are_the_fields_of_the_weights():
    """Q5: `terms` names exactly the fields of Weights, in their order, and the breakdown them."""
    candidate = Candidate(item("a", "x"), 2.0, "r")
    names = [weight.name for weight in fields(Weights)]
    assert list(terms(candidate, Scale(0.0, 4.0, DAY))) == names
    assert list(scored(item("a", "x"), 0.5).breakdown()) == [*names, "total"]


def test_relevance_is_relative_to_the_best_candidate():
    """Q2: relevance is the raw score over the recall's best, so the best scores exactly 1."""
    scale = Scale(0.0, 4.0, DAY)
    assert terms(Candidate(item("a", "x"), 4.0, ""), scale)["relevance"] == 1.0
    assert terms(Candidate(item("b", "x"), 1.0, ""), scale)["relevance"] == 0.25


def test_the_explanation_names_every_term_that_counts():
    """Q4: one line with the total, each term of a weight above 0 by name, and the reason."""
    memory = item("a", "x", importance=0.8)
    line = scored(memory, 0.5, now=DAY, reason="semantic fact").explain()
    assert line == "0.545 = relevance 0.50, recency 0.50, importance 0.80 (semantic fact)"
    weights = Weights(relevance=1.0, recency=0.0, importance=0.0)
    alone = scored(memory, 0.5, now=DAY, weights=weights, reason="fact")
    assert alone.explain() == "0.500 = relevance 0.50 (fact)"
    assert list(alone.breakdown()) == [*(weight.name for weight in fields(Weights)), "total"]


def test_a_policy_out_of_range_is_refused_naming_its_rule():
    """CA1, CA3: a recall setting out of range is refused with a ValueError naming its rule."""
    bad = {
        "CA3": {"recency_half_life_days": 0},
        "CA1": {"thin_semantic": -1},
    }
    for rule, setting in bad.items():
        with pytest.raises(ValueError, match=rule):
            RecallPolicy(**setting)
    with pytest.raises(ValueError, match="Q2"):
        Weights(recency=float("nan"))


def _manager_on_sqlite(path, **settings):
    store = SQLiteStore(path)
    manager = MemoryManager(store, clock=ManualClock(1_000.0), settings=ManagerSettings(**settings))
    for number in range(3):
        manager.write(f"the zebra crossing number {number}", "ana", level="episodic")
    manager.write("the zebra keeper is bob", "bob", level="episodic")
    return store, manager


def test_a_recall_that_counts_use_commits_once(tmp_path):
    """Q6: the accesses and the audit record of a recall are one transaction, one commit."""
    store, manager = _manager_on_sqlite(tmp_path / "m.db")
    assert commits_of(store, lambda: manager.recall("zebra", "ana")) == 1
    assert [item.access_count for item in manager.list("ana")] == [1, 1, 1]
    assert [entry.operation for entry in manager.history("ana")][-1] == "recall"


def test_a_recall_that_found_nothing_writes_nothing(tmp_path):
    """Q6: a recall that chose no result commits nothing."""
    store, manager = _manager_on_sqlite(tmp_path / "m.db")
    assert commits_of(store, lambda: manager.recall("giraffe", "ana")) == 0


def test_the_speaker_term_is_one_for_a_speaker_the_query_names():
    """Q7: with "caroline" named, Caroline's event has speaker 1 and adds its weight; Mel's 0."""
    said = item(
        "e1", "I researched adoption agencies", "episodic", metadata={"speaker": "Caroline"}
    )
    other = item("e2", "I went camping", "episodic", metadata={"speaker": "Mel"})
    scale = Scale(0.0, 1.0, DAY, frozenset({"Caroline"}))
    named = score(Candidate(said, 0.5, "episode"), scale, Weights())
    unnamed = score(Candidate(other, 0.5, "episode"), scale, Weights())
    assert (named.parts["speaker"], unnamed.parts["speaker"]) == (1.0, 0.0)
    assert named.total - unnamed.total == pytest.approx(Weights().speaker)


def test_q7_a_speaker_is_named_only_by_every_word_of_their_name():
    """Q7: a query naming Caroline Jones gives her turn the speaker term and not Caroline
    Smith's, whose name shares one of its words."""
    manager = MemoryManager(clock=ManualClock(0))
    manager.write("the camping trip, the best camping trip", "u", speaker="Caroline Smith")
    manager.write("I still think about that camping trip", "u", speaker="Caroline Jones")
    results = manager.recall("what did Caroline Jones say about the camping trip?", "u").results
    assert {r.item.metadata["speaker"]: r.parts["speaker"] for r in results} == {
        "Caroline Jones": 1.0,
        "Caroline Smith": 0.0,
    }


def test_the_explanation_names_a_term_only_when_it_counts():
    """Q4: a speaker nobody named (value 0) is left out of the explanation; a named one is in."""
    said = item(
        "e1", "I researched adoption agencies", "episodic", metadata={"speaker": "Caroline"}
    )
    unnamed = score(Candidate(said, 1.0, "episode"), Scale(0.0, 1.0, DAY), Weights())
    named = score(
        Candidate(said, 1.0, "episode"), Scale(0.0, 1.0, DAY, frozenset({"Caroline"})), Weights()
    )
    assert "speaker" not in unnamed.explain() and "speaker 1.00" in named.explain()
