"""Example tests for recuris.core.decay.DecayManager (D1-D4, D6-D8)."""

import math

import pytest
from power_law import PowerLaw

from recuris import DecayManager, DecaySettings, Episode, ManualClock
from recuris.core.clock import DAY
from recuris.core.decay import Exponential


def item(id="episode-1", importance=1.0, last_access_at=0.0, access_count=0):
    return Episode(
        task_type="t",
        goal="g",
        status="success",
        id=id,
        importance=importance,
        created_at=0.0,
        last_access_at=last_access_at,
        access_count=access_count,
    )


@pytest.fixture
def clock():
    return ManualClock(0)


def test_fresh_item_weighs_its_importance(clock):
    """D7: at elapsed 0 with no access the weight is the importance."""
    assert DecayManager(clock=clock).weight(item(importance=0.8)) == 0.8


def test_one_half_life_halves_the_weight(clock):
    """D2: after one half-life the decayed part is exactly half."""
    clock.advance(7 * DAY)
    assert DecayManager(DecaySettings(half_life_days=7), clock=clock).weight(item()) == 0.5


def test_weight_matches_the_documented_formula(clock):
    """D7: weight = importance * curve(elapsed, half_life) + min(cap, per_access * accesses)."""
    clock.advance(3 * DAY)
    manager = DecayManager(clock=clock)
    expected = 0.9 * manager.settings.curve.weight(3 * DAY, 7 * DAY) + min(0.3, 0.05 * 4)
    assert manager.weight(item(importance=0.9, access_count=4)) == pytest.approx(expected)


def test_the_exponential_is_document_004s_formula():
    """D8: Exponential() weighs 2^(-elapsed / half_life); its inverse is half_life * log2(1/w)."""
    curve = Exponential()
    assert curve.weight(3.0, 7.0) == pytest.approx(math.exp(-math.log(2) * 3 / 7))
    assert curve.elapsed_for(0.125, 7.0) == pytest.approx(21.0)


def test_reinforcement_is_capped(clock):
    """D3: many accesses add no more than the cap: an item of importance 0 weighs the cap."""
    clock.advance(1000 * DAY)
    memory = item(importance=0.0, access_count=1000)
    assert DecayManager(clock=clock).weight(memory) == pytest.approx(0.3)


def test_on_access_resets_the_clock_and_counts(clock):
    """D7, retrieval reinforcement: the last access moves to now and the count grows."""
    manager, memory = DecayManager(clock=clock), item()
    clock.advance(30 * DAY)
    manager.on_access(memory)
    assert (memory.last_access_at, memory.access_count) == (30 * DAY, 1)
    assert manager.weight(memory) == pytest.approx(1.05)


def test_a_future_last_access_counts_as_now(clock):
    """D7: a future last access counts as now: clock skew cannot push the weight above its top."""
    assert DecayManager(clock=clock).weight(item(last_access_at=5 * DAY)) == 1.0


def test_cycle_forgets_below_threshold_and_keeps_the_rest(clock):
    """D4: the stale item is forgotten, the used one is kept, and one audit record is written."""
    settings = DecaySettings(half_life_days=7, retention_threshold=0.15)
    manager = DecayManager(settings, clock=clock)
    stale, used = item("stale"), item("used", access_count=1)
    # Until the curve leaves 0.125: the stale item then weighs 0.125, the used one 0.175.
    idle = settings.curve.elapsed_for(0.125, settings.half_life_seconds)
    clock.advance(idle)
    report = manager.run_cycle([stale, used])
    assert [i.id for i in report.forgotten] == ["stale"] and [i.id for i in report.kept] == ["used"]
    assert [(r.item_id, r.operation, r.at) for r in manager.audit_log] == [
        ("stale", "forget", idle)
    ]
    assert report.audit[0].weight == pytest.approx(0.125)
    assert "below retention threshold 0.15" in report.audit[0].reason


@pytest.mark.parametrize(
    "settings, rule",
    [
        (dict(half_life_days=0), "half_life_days"),
        (dict(half_life_days=-1), "half_life_days"),
        (dict(retention_threshold=-0.1), "retention_threshold"),
        (dict(reinforcement_cap=float("nan")), "reinforcement_cap"),
    ],
)
def test_bad_settings_are_refused(settings, rule):
    """VL3: half_life_days <= 0 and negative or NaN settings raise ValueError naming the setting."""
    with pytest.raises(ValueError, match=rule):
        DecayManager(DecaySettings(**settings))


def test_non_numeric_setting_is_refused():
    """VL3: a setting that is not a number is refused, naming the setting."""
    with pytest.raises(ValueError, match="half_life_days"):
        DecayManager(DecaySettings(half_life_days="7"))


def test_the_decay_audit_log_keeps_only_the_newest_records(clock):
    """D6: the in-memory audit log holds at most `max_audit_log` records, the newest."""
    manager = DecayManager(DecaySettings(max_audit_log=3), clock=clock)
    clock.advance(100 * DAY)
    manager.run_cycle([item(id=f"episode-{n}") for n in range(5)])
    assert [record.item_id for record in manager.audit_log] == [
        "episode-2",
        "episode-3",
        "episode-4",
    ]


def test_consolidated_memory_decays_more_slowly_by_the_slowdown(clock):
    """D5: an item whose consolidated flag is true halves in `consolidated_slowdown` half-lives."""
    from types import SimpleNamespace

    fact = SimpleNamespace(
        id="fact-1", importance=1.0, last_access_at=0.0, access_count=0, consolidated=True
    )
    settings = DecaySettings(half_life_days=7, consolidated_slowdown=3)
    manager = DecayManager(settings, clock=clock)
    clock.advance(21 * DAY)
    raw = settings.curve.weight(21 * DAY, settings.half_life_seconds)
    assert manager.weight(fact) == 0.5 and manager.weight(item()) == pytest.approx(raw)
    assert raw < 0.5


def test_an_episode_is_raw_memory():
    """D5: an Episode is never consolidated; decay weighs it at the plain half-life."""
    assert item().consolidated is False


def test_decay_weighs_by_the_curve_its_settings_name(clock):
    """D8: the decayed part follows `DecaySettings.curve`: under 1 / (1 + t / h), 1/4 at 3h."""
    clock.advance(21 * DAY)
    settings = DecaySettings(half_life_days=7, curve=PowerLaw(exponent=1.0))
    assert DecayManager(settings, clock=clock).weight(item()) == pytest.approx(0.25)


def test_a_curve_without_weight_and_inverse_is_refused():
    """D8: a curve that is not a ForgettingCurve (weight, elapsed_for) raises TypeError."""
    with pytest.raises(TypeError, match="D8"):
        DecaySettings(curve=lambda elapsed, half_life: 1.0)


def test_the_curves_inverse_at_its_ends():
    """D8: a weight of 1 or more is reached at once; a weight of 0 or less never."""
    curve = DecaySettings().curve
    assert curve.elapsed_for(1.0, 7.0) == 0.0 and curve.elapsed_for(1.5, 7.0) == 0.0
    assert curve.elapsed_for(0.0, 7.0) == math.inf
