"""Scorecard formulas in isolation: grade bands (exact edges, no rounding), the ratio part
score and the fleet reference."""

import pytest

from obsctl.services.scorecards.scoring import (
    AgentTotals,
    FleetReference,
    fleet_reference,
    grade_for,
    ratio,
    score,
)


@pytest.mark.parametrize("value,grade", [
    (100, "A+"), (95, "A+"), (94.99, "A"), (90, "A"), (89.99, "B+"), (85, "B+"), (84.99, "B"),
    (80, "B"), (79.99, "B-"), (70, "B-"), (69.99, "C+"), (65, "C+"), (64.99, "C"), (60, "C"),
    (59.99, "D"), (50, "D"), (49.99, "F"), (0, "F"),
])
def test_grade_bands_at_their_edges(value, grade):
    assert grade_for(value) == grade


def test_grade_is_not_rounded_up():
    assert grade_for(94.999999) == "A"
    assert grade_for(69.9999) == "C+"


@pytest.mark.parametrize("value,reference,expected", [
    (100, 200, 100.0),   # better than the fleet
    (200, 200, 100.0),   # as good as the fleet
    (400, 200, 50.0),    # twice the fleet
    (800, 200, 25.0),
    (5, 0, 0.0),         # the fleet needs nothing and the agent does
    (0, 0, 100.0),
    (None, 200, None),   # unknown
])
def test_ratio(value, reference, expected):
    assert ratio(value, reference) == expected


def totals(**overrides) -> AgentTotals:
    values = {"sessions": 4, "error_sessions": 1, "completed_sessions": 2, "events": 40,
              "error_events": 2, "timed_events": 30, "p50_ms": 200.0, "p95_ms": 900.0,
              "tokens": 8000, "cost": 0.4}
    values.update(overrides)
    return AgentTotals(**values)


def test_fleet_reference_is_the_median_agent():
    ref = fleet_reference([totals(p50_ms=100.0, sessions=2), totals(p50_ms=300.0, sessions=10),
                           totals(p50_ms=None, sessions=3, cost=None)])
    assert ref.agents == 3
    assert ref.p50_ms == 200.0          # median of 100 and 300; the agent without data is left out
    assert ref.sessions == 3.0          # median of 2, 10, 3
    assert ref.cost_per_session == pytest.approx(0.12)  # median of 0.4 / 2 and 0.4 / 10
    assert ref.per_day(3).sessions == 1.0


def test_score_by_hand():
    ref = FleetReference(agents=2, p50_ms=100.0, p95_ms=900.0, tokens_per_session=1000.0,
                         cost_per_session=0.2, sessions=8.0)
    result = score(totals(), ref)
    # reliability: events 2/40 = 5% -> 100 - 25 = 75; sessions 1/4 = 25% -> 75
    # performance: p50 200 vs 100 -> 50; p95 900 vs 900 -> 100 => 75
    # efficiency: tokens 2000 vs 1000 -> 50; cost 0.1 vs 0.2 -> 100 => 75
    # throughput: volume 4 / 8 -> 50; completion 2/4 -> 50 => 50
    assert result["dimensions"] == {
        "reliability": {"score": 75.0, "grade": "B-"},
        "performance": {"score": 75.0, "grade": "B-"},
        "efficiency": {"score": 75.0, "grade": "B-"},
        "throughput": {"score": 50.0, "grade": "D"},
    }
    assert result["overall_score"] == 68.75
    assert result["grade"] == "C+"


def test_event_part_floors_at_zero_and_unknown_parts_are_left_out():
    ref = FleetReference(agents=1, p50_ms=None, p95_ms=None, tokens_per_session=10.0,
                         cost_per_session=None, sessions=1.0)
    result = score(totals(events=10, error_events=5, error_sessions=0, completed_sessions=4,
                          p50_ms=None, p95_ms=None, tokens=80, cost=None, sessions=1), ref)
    # 50% event errors -> 100 - 250 -> 0; no error sessions -> 100
    assert result["dimensions"]["reliability"]["score"] == 50.0
    # no timed events: nothing slower than the fleet was seen
    assert result["dimensions"]["performance"]["score"] == 100.0
    # 80 tokens per session vs 10 -> 12.5; nothing priced: the cost part is left out
    assert result["dimensions"]["efficiency"]["score"] == 12.5
    assert result["breakdown"]["efficiency"]["cost_score"] is None


def test_overall_is_the_mean_of_the_reported_dimension_scores():
    ref = FleetReference(agents=1, p50_ms=300.0, p95_ms=700.0, tokens_per_session=1.0,
                         cost_per_session=None, sessions=1.0)
    # p50 400 vs 300 -> 75, p95 900 vs 700 -> 77.777... => 76.388... reported 76.39
    result = score(totals(p50_ms=400.0, p95_ms=900.0, tokens=0, cost=None, error_events=0,
                          error_sessions=0, completed_sessions=4), ref)
    dims = result["dimensions"]
    assert dims["performance"]["score"] == 76.39
    assert result["overall_score"] == round(sum(d["score"] for d in dims.values()) / 4, 2)
