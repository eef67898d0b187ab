"""Scorecards over a small hand-made fleet: every dimension and overall score computed by
hand, the `days` window, ordering, breakdown, trend and 404s (service layer)."""

from datetime import UTC, datetime, timedelta

import orjson
import pytest

from obsctl.config import Settings
from obsctl.errors import InvalidInput, NotFound
from obsctl.services.ingest import ingest_events
from obsctl.services.scorecards import get_scorecard, list_scorecards
from obsctl.timeutil import format_ts

AT = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)
# USD per million tokens: cheap 1 in / 2 out, pricey 10 in / 30 out.
PRICES = {"m-cheap": {"input_per_mtok": 1, "output_per_mtok": 2},
          "m-pricey": {"input_per_mtok": 10, "output_per_mtok": 30}}


def ts(delta: timedelta, at: datetime = AT) -> str:
    return format_ts(at - delta)


def session(sid: str, agent: str, started: timedelta, events: list[dict], status: str = "completed",
            at: datetime = AT) -> list[dict]:
    """A session_start, the events one second apart, and a session_end with `status`."""
    out = [{"event_type": "session_start", "session_id": sid, "agent_name": agent,
            "timestamp": ts(started, at)}]
    for i, ev in enumerate(events, 1):
        out.append({"event_type": "llm_call", "session_id": sid,
                    "timestamp": ts(started - timedelta(seconds=i), at), **ev})
    out.append({"event_type": "session_end", "session_id": sid, "status": status,
                "timestamp": ts(started - timedelta(seconds=len(events) + 1), at)})
    return out


def llm(duration, tokens_in=100, tokens_out=50, model="m-cheap"):
    return {"event_type": "llm_call", "duration_ms": duration, "model": model,
            "tokens_in": tokens_in, "tokens_out": tokens_out}


def fleet_events(at: datetime = AT) -> list[dict]:
    """alpha: 2 sessions (one in error), 10 events (1 error), durations 100..1000 ms.
    beta: 1 session, 2 pricey calls of 200 and 400 ms. delta: 3 sessions of one untimed
    event each. gamma: one session 9 days ago (outside a 7-day window)."""
    a1 = [llm(100), llm(200), llm(300), llm(400),
          *({"event_type": "tool_call", "duration_ms": d, "tool_call": {"name": "search"}}
            for d in (500, 600, 700, 800)),
          {"event_type": "error", "duration_ms": 900, "output_data": {"error": "boom"}}]
    return [
        *session("a1", "alpha", timedelta(hours=26), a1, at=at),                     # day 5 of 7
        *session("a2", "alpha", timedelta(hours=50), [llm(1000, 200, 100)], "error", at=at),  # day 4
        *session("b1", "beta", timedelta(hours=25),
                 [llm(200, 1000, 500, "m-pricey"), llm(400, 1000, 500, "m-pricey")], at=at),
        *(e for i in range(3)
          for e in session(f"d{i}", "delta", timedelta(hours=10 + i), [{"event_type": "decision"}], at=at)),
        *session("g1", "gamma", timedelta(days=9), [llm(50)], at=at),
    ]


@pytest.fixture
def prices_file(tmp_path):
    path = tmp_path / "prices.json"
    path.write_bytes(orjson.dumps(PRICES))
    return path


@pytest.fixture
def priced(db_url, prices_file) -> Settings:
    return Settings.from_env({"OBSCTL_PRICES": str(prices_file)}, db_url=db_url)


@pytest.fixture
def fleet(db, prices_file):
    db.prices_path, db.pricer = prices_file, None  # the events are costed at ingest
    ingest_events(db, fleet_events())
    return db


# Fleet reference (median over alpha, beta, delta): p50 median(500, 200) = 350,
# p95 median(1000, 400) = 700, tokens/session median(450, 3000, 0) = 450,
# cost/session median(0.0006, 0.05) = 0.0253, sessions median(2, 1, 3) = 2.
EXPECTED = {
    # reliability: 1/10 event errors -> 50, 1/2 error sessions -> 50          => 50 (D)
    # performance: 350/500 -> 70, 700/1000 -> 70                                => 70 (B-)
    # efficiency: 450 tokens/session = fleet -> 100, $0.0006 < $0.0253 -> 100   => 100
    # throughput: 2 sessions = fleet -> 100, completion 1/2 -> 50               => 75 (B-)
    "alpha": (73.75, "B-", {"reliability": (50.0, "D"), "performance": (70.0, "B-"),
                            "efficiency": (100.0, "A+"), "throughput": (75.0, "B-")}),
    # efficiency: 450/3000 -> 15, 0.0253/0.05 -> 50.6 => 32.8; throughput: 1/2 -> 50, 100 => 75
    "beta": (76.95, "B-", {"reliability": (100.0, "A+"), "performance": (100.0, "A+"),
                           "efficiency": (32.8, "F"), "throughput": (75.0, "B-")}),
    # no timed events (performance 100), no tokens, nothing priced (cost part left out)
    "delta": (100.0, "A+", {"reliability": (100.0, "A+"), "performance": (100.0, "A+"),
                            "efficiency": (100.0, "A+"), "throughput": (100.0, "A+")}),
}


def test_every_dimension_and_overall_score_by_hand(fleet, priced):
    cards = list_scorecards(fleet, priced, at=AT)
    assert [c["agent"] for c in cards] == ["delta", "beta", "alpha"]  # best overall first
    for card in cards:
        overall, grade, dims = EXPECTED[card["agent"]]
        assert (card["overall_score"], card["grade"]) == (overall, grade), card["agent"]
        assert {k: (v["score"], v["grade"]) for k, v in card["dimensions"].items()} == dims
        assert card["period_days"] == 7
    assert {c["agent"]: c["sessions_analyzed"] for c in cards} == {"alpha": 2, "beta": 1, "delta": 3}


def test_list_item_has_exactly_the_scorecard_fields(fleet, priced):
    card = list_scorecards(fleet, priced, at=AT)[0]
    assert list(card) == ["agent", "overall_score", "grade", "dimensions", "sessions_analyzed",
                          "period_days"]


def test_days_window_includes_older_sessions(fleet, priced):
    assert "gamma" not in {c["agent"] for c in list_scorecards(fleet, priced, days=7, at=AT)}
    cards = list_scorecards(fleet, priced, days=10, at=AT)
    assert {c["agent"] for c in cards} == {"alpha", "beta", "delta", "gamma"}
    assert {c["period_days"] for c in cards} == {10}


def test_window_starts_exactly_days_before_now(db, priced):
    ingest_events(db, [
        *session("edge", "edge-in", timedelta(days=1), [llm(10)]),
        *session("late", "edge-out", timedelta(days=1, milliseconds=1), [llm(10)]),
    ])
    assert [c["agent"] for c in list_scorecards(db, priced, days=1, at=AT)] == ["edge-in"]


@pytest.mark.parametrize("days", [0, 366, -1, "7", 2.5, True])
def test_days_must_be_an_integer_from_1_to_365(fleet, priced, days):
    with pytest.raises(InvalidInput, match="days must be an integer from 1 to 365"):
        list_scorecards(fleet, priced, days=days, at=AT)


def test_no_sessions_in_the_window_is_an_empty_list(db, priced):
    assert list_scorecards(db, priced, at=AT) == []


def test_detail_breakdown_holds_the_raw_inputs(fleet, priced):
    card = get_scorecard(fleet, priced, "alpha", at=AT)
    assert (card["overall_score"], card["grade"]) == (73.75, "B-")
    assert card["since"] == "2026-06-03T12:00:00.000Z" and card["until"] == "2026-06-10T12:00:00.000Z"
    assert card["fleet_agents"] == 3
    b = card["breakdown"]
    assert b["reliability"] == {"body_events": 10, "error_events": 1, "error_event_rate": 10.0,
                                "sessions": 2, "error_sessions": 1, "error_session_rate": 50.0,
                                "event_score": 50.0, "session_score": 50.0, "change_score": None}
    assert b["performance"] == {"timed_events": 10, "p50_duration_ms": 500.0,
                                "p95_duration_ms": 1000.0, "fleet_p50_duration_ms": 350.0,
                                "fleet_p95_duration_ms": 700.0, "p50_score": 70.0, "p95_score": 70.0,
                                "change_score": None}
    assert b["efficiency"] == {"tokens": 900, "tokens_per_session": 450.0,
                               "fleet_tokens_per_session": 450.0, "cost_usd": 0.0012,
                               "cost_per_session": 0.0006, "fleet_cost_per_session": 0.0253,
                               "tokens_score": 100.0, "cost_score": 100.0,
                               "change_score": None}
    assert b["throughput"] == {"sessions": 2, "completed_sessions": 1, "completion_rate": 50.0,
                               "fleet_sessions": 2.0, "volume_score": 100.0, "completion_score": 50.0}


def test_trend_has_one_point_per_day_scored_against_the_window_fleet(fleet, priced):
    trend = get_scorecard(fleet, priced, "alpha", at=AT)["trend"]
    assert [p["day"] for p in trend] == [f"2026-06-0{d}" for d in range(3, 10)]
    assert trend[0]["start"] == "2026-06-03T12:00:00.000Z"
    assert trend[-1]["end"] == "2026-06-10T12:00:00.000Z"
    assert [p["sessions"] for p in trend] == [0, 0, 0, 0, 1, 1, 0]
    assert trend[0] == {"day": "2026-06-03", "start": "2026-06-03T12:00:00.000Z",
                        "end": "2026-06-04T12:00:00.000Z", "sessions": 0, "body_events": 0,
                        "error_events": 0, "error_event_rate": None, "error_rate": None,
                        "overall_score": None, "grade": None}
    # Day 5 holds a1 only: reliability (44.44 + 100) / 2 = 72.22; performance p50 500 -> 70,
    # p95 900 -> 77.78 => 73.89; efficiency 600 tokens vs 450 -> 75, cost -> 100 => 87.5;
    # throughput: volume capped at 100 (fleet 2 / 7 per day), completed => 100.
    assert (trend[5]["error_events"], trend[5]["body_events"], trend[5]["error_event_rate"],
            trend[5]["error_rate"]) == (1, 9, 11.11, 11.11)
    assert (trend[5]["overall_score"], trend[5]["grade"]) == (83.4, "B")
    assert trend[4]["error_rate"] == 0.0  # a2: one event, no error (the session ended in error)


def test_trend_day_boundary_belongs_to_the_later_day(db, priced):
    # A session starting exactly 24 h after the window start is in day 1, not day 0.
    ingest_events(db, session("b", "edge", timedelta(days=1), [llm(10)]))
    trend = get_scorecard(db, priced, "edge", days=2, at=AT)["trend"]
    assert [p["sessions"] for p in trend] == [0, 1]


def test_unknown_agent_or_no_data_is_not_found(fleet, priced):
    with pytest.raises(NotFound, match="no sessions of agent 'nobody'"):
        get_scorecard(fleet, priced, "nobody", at=AT)
    with pytest.raises(NotFound):  # gamma exists, but not in the last 7 days
        get_scorecard(fleet, priced, "gamma", at=AT)
    assert get_scorecard(fleet, priced, "gamma", days=10, at=AT)["sessions_analyzed"] == 1


def test_lifecycle_events_do_not_count(db, priced):
    ingest_events(db, [
        {"event_type": "session_start", "session_id": "s", "agent_name": "solo",
         "timestamp": ts(timedelta(hours=2)), "duration_ms": 99999},
        {"event_type": "llm_call", "session_id": "s", "timestamp": ts(timedelta(hours=1)),
         "duration_ms": 10},
    ])
    card = get_scorecard(db, priced, "solo", at=AT)
    assert card["breakdown"]["reliability"]["body_events"] == 1
    assert card["breakdown"]["performance"]["p95_duration_ms"] == 10.0
    # an active session is not completed
    assert card["breakdown"]["throughput"]["completion_rate"] == 0.0


def test_unpriced_models_leave_the_cost_part_out(db, settings):
    ingest_events(db, session("s", "solo", timedelta(hours=1), [llm(10, model="no-such-model")]))
    card = get_scorecard(db, settings, "solo", at=AT)
    assert card["breakdown"]["efficiency"]["cost_usd"] is None
    assert card["breakdown"]["efficiency"]["cost_score"] is None


def test_percentiles_do_not_depend_on_ingest_order(db, priced):
    # Two agents, durations sent shuffled: a = 700 100 900 300 500, b = 40 10 30 20.
    ingest_events(db, [
        *session("a", "a", timedelta(hours=3), [llm(d) for d in (700, 100, 900, 300, 500)]),
        *session("b", "b", timedelta(hours=2), [llm(d) for d in (40, 10, 30, 20)]),
    ])
    perf = {a: get_scorecard(db, priced, a, at=AT)["breakdown"]["performance"] for a in "ab"}
    # nearest rank: p50 is the 3rd of 5 and the 2nd of 4; p95 the 5th of 5 and the 4th of 4
    assert (perf["a"]["p50_duration_ms"], perf["a"]["p95_duration_ms"]) == (500.0, 900.0)
    assert (perf["b"]["p50_duration_ms"], perf["b"]["p95_duration_ms"]) == (20.0, 40.0)
    assert (perf["a"]["fleet_p50_duration_ms"], perf["a"]["fleet_p95_duration_ms"]) == (260.0, 470.0)


def test_costs_are_the_ones_stored_at_ingest(fleet, db_url):
    # The fleet was costed at ingest with PRICES: a reader without OBSCTL_PRICES scores the
    # same (until `obsctl db reprice` costs the events again).
    unpriced = Settings.from_env({}, db_url=db_url)
    cards = {c["agent"]: c for c in list_scorecards(fleet, unpriced, at=AT)}
    assert (cards["beta"]["overall_score"], cards["beta"]["dimensions"]["efficiency"]["score"]) == (76.95, 32.8)
    beta = get_scorecard(fleet, unpriced, "beta", at=AT)["breakdown"]["efficiency"]
    assert beta["cost_usd"] == 0.05


@pytest.mark.parametrize("sizes", [(20, 21), (2, 100), (101, 3)])
def test_percentiles_are_nearest_rank_for_each_agent(db, priced, sizes):
    # Agent "a" then "b" (one sorted pass over both): durations 1..n in shuffled order, so the
    # p50 is the ceil(n/2)-th and the p95 the ceil(0.95 n)-th smallest of that agent's own.
    events = []
    for agent, n in zip("ab", sizes, strict=True):
        order = sorted(range(1, n + 1), key=lambda v: (v * 7919) % (n + 13))
        events += session(f"s-{agent}", agent, timedelta(hours=1), [llm(v) for v in order])
    ingest_events(db, events)
    for agent, n in zip("ab", sizes, strict=True):
        performance = get_scorecard(db, priced, agent, at=AT)["breakdown"]["performance"]
        assert (performance["p50_duration_ms"], performance["p95_duration_ms"]) == \
            (float((n + 1) // 2), float(-(-95 * n // 100)))


def test_an_agent_with_one_or_two_timed_calls_has_both_percentiles(db, priced):
    # With one duration, its p50 and p95 are the same row: both are that duration (the p50
    # was once lost to the p95 there). With two, the p50 is the first and the p95 the second.
    now = datetime.now(UTC)
    ingest_events(db, session("one", "solo", timedelta(hours=1), [llm(250)], at=now)
                  + session("two", "pair", timedelta(hours=1), [llm(100), llm(300)], at=now))
    performance = {name: get_scorecard(db, priced, name, at=now)["breakdown"]["performance"]
                   for name in ("solo", "pair")}
    assert (performance["solo"]["p50_duration_ms"], performance["solo"]["p95_duration_ms"]) == (250.0, 250.0)
    assert (performance["pair"]["p50_duration_ms"], performance["pair"]["p95_duration_ms"]) == (100.0, 300.0)
