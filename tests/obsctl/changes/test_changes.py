"""Change detection on a hand-made fleet: every number below is worked out by hand from the
events in `fleet`.

Prices (USD per million tokens): claude-3-haiku 0.25 in / 1.25 out, claude-3-opus 15 / 75,
gpt-4o-mini 0.15 / 0.6. A session's four LLM calls spend 6,000 tokens in and 1,500 out, so a
haiku session costs 0.0015 + 0.001875 = $0.003375, an opus one 0.09 + 0.1125 = $0.2025 and a
gpt-4o-mini one 0.0009 + 0.0009 = $0.0018.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from obsctl.errors import InvalidInput, NotFound
from obsctl.services.changes import acknowledge_change, config_of, list_changes, release_of, verdict
from obsctl.services.ingest import ingest_events
from obsctl.services.pricing import Pricer
from obsctl.services.triage import triage_session
from obsctl.timeutil import format_ts

PRICES = {"claude-3-haiku": {"input_per_mtok": 0.25, "output_per_mtok": 1.25},
          "claude-3-opus": {"input_per_mtok": 15.0, "output_per_mtok": 75.0},
          "gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},
          "gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10.0}}
T0 = datetime(2026, 3, 1, tzinfo=UTC)
SINCE, UNTIL = format_ts(T0), format_ts(T0 + timedelta(days=6))
HAIKU_MS, OPUS_MS = (900, 1060, 1060, 1200), (8000, 8600, 8600, 9100)


def at(hours: float) -> str:
    return format_ts(T0 + timedelta(hours=hours))


def session(sid: str, agent: str, hours: float, model: str, durations=(1000, 1000, 1000, 1000),
            release: str | None = None, errors: int = 0) -> list[dict]:
    start = {"session_id": sid, "event_type": "session_start", "agent_name": agent,
             "timestamp": at(hours), "event_id": f"{sid}-start"}
    if release is not None:
        start["metadata"] = {"release": release}
    events = [start]
    for n, ms in enumerate(durations):
        events.append({"session_id": sid, "event_type": "llm_call", "model": model, "tokens_in": 1500,
                       "tokens_out": 375, "duration_ms": ms, "timestamp": at(hours + (n + 1) / 60),
                       "event_id": f"{sid}-llm-{n}"})
    for n in range(errors):
        events.append({"session_id": sid, "event_type": "tool_call", "timestamp": at(hours + (n + 5) / 60),
                       "event_id": f"{sid}-err-{n}",
                       "tool_call": {"name": "crm_lookup", "input": {"id": n}, "error": "HTTP 500 from crm"}})
    events.append({"session_id": sid, "event_type": "session_end", "status": "completed",
                   "timestamp": at(hours + 0.5), "event_id": f"{sid}-end"})
    return events


def fleet(db) -> None:
    """- research-agent: six claude-3-haiku sessions every 8 hours from T0 (r-0..r-5), then four
      on claude-3-opus (r-6..r-9, from T0+48h): LLM p50 1,060 ms -> 8,600 ms, cost per session
      $0.003375 -> $0.2025 (60x), no errors: a regression.
    - router: alternates gpt-4o and gpt-4o-mini (eight sessions): no change.
    - support-bot: gpt-4o-mini, release 1.2 for five sessions (s-0..s-4), then 1.3 for three
      (s-5..s-7, from T0+50h), each 1.3 session with one failing tool call among its five body
      events: error rate 0% -> 20% (3 of 15), latency and cost the same: a regression.
    """
    events = []
    for k in range(10):
        model, durations = ("claude-3-haiku", HAIKU_MS) if k < 6 else ("claude-3-opus", OPUS_MS)
        events += session(f"r-{k}", "research-agent", 8 * k, model, durations)
    for k in range(8):
        events += session(f"x-{k}", "router", 1 + 8 * k, "gpt-4o" if k % 2 == 0 else "gpt-4o-mini")
    for k in range(8):
        events += session(f"s-{k}", "support-bot", 10 * k, "gpt-4o-mini",
                          release="1.2" if k < 5 else "1.3", errors=0 if k < 5 else 1)
    ingest_events(db, events)


@pytest.fixture
def pricer(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(PRICES))
    return Pricer(path)


@pytest.fixture
def fleet_db(db):
    fleet(db)
    return db


def test_a_model_switch_and_a_release_are_found(fleet_db, pricer):
    result = list_changes(fleet_db, pricer=pricer, since=SINCE, until=UNTIL)
    assert result["total"] == 2
    release, model = result["changes"]  # both open regressions, newest first
    assert (model["agent_name"], model["changed_at"], model["first_session_id"]) == ("research-agent", at(48), "r-6")
    assert model["change_id"] == f"research-agent@{at(48)}"
    assert (model["from"], model["to"]) == ({"model": "claude-3-haiku", "release": None},
                                            {"model": "claude-3-opus", "release": None})
    assert (model["status"], model["provisional"], model["acknowledged"]) == ("regression", False, False)
    assert model["metrics"] == {"llm_p50_ms": "regression", "cost_per_session_usd": "regression",
                                "error_event_rate": "unchanged"}
    before, after = model["before"], model["after"]
    assert (before["sessions"], before["llm_calls"], before["llm_p50_ms"]) == (6, 24, 1060.0)
    assert (after["sessions"], after["llm_calls"], after["llm_p50_ms"]) == (4, 16, 8600.0)
    assert (before["cost_per_session_usd"], after["cost_per_session_usd"]) == (0.003375, 0.2025)
    assert (before["error_event_rate"], after["error_event_rate"]) == (0.0, 0.0)
    assert model["title"] == ("model claude-3-haiku -> claude-3-opus: LLM p50 1.06 s -> 8.60 s (8.1x), "
                              "cost per session $0.0034 -> $0.2025 (60.0x), error rate 0% -> 0%")

    assert (release["agent_name"], release["changed_at"]) == ("support-bot", at(50))
    assert (release["from"]["release"], release["to"]["release"]) == ("1.2", "1.3")
    assert release["metrics"] == {"llm_p50_ms": "unchanged", "cost_per_session_usd": "unchanged",
                                  "error_event_rate": "regression"}
    assert (release["before"]["error_event_rate"], release["after"]["error_event_rate"]) == (0.0, 20.0)
    assert release["after"]["error_events"] == 3 and release["after"]["body_events"] == 15
    assert release["title"].startswith("release 1.2 -> 1.3: ")


def test_alternating_models_are_no_change(fleet_db, pricer):
    assert list_changes(fleet_db, pricer=pricer, since=SINCE, until=UNTIL, agent="router")["total"] == 0


def test_a_change_is_provisional_until_three_sessions_ran_it(fleet_db, pricer):
    early = list_changes(fleet_db, pricer=pricer, since=SINCE, until=at(60), agent="research-agent")
    (change,) = early["changes"]
    assert (change["after"]["sessions"], change["provisional"]) == (2, True)


def test_acknowledging_a_change(fleet_db, pricer):
    change_id = f"research-agent@{at(48)}"
    acked = acknowledge_change(fleet_db, change_id, pricer=pricer, note="opus on purpose")
    assert (acked["acknowledged"], acked["note"], acked["status"]) == (True, "opus on purpose", "regression")
    again = acknowledge_change(fleet_db, change_id, pricer=pricer, note="later")
    assert (again["acknowledged_at"], again["note"]) == (acked["acknowledged_at"], "opus on purpose")
    listed = list_changes(fleet_db, pricer=pricer, since=SINCE, until=UNTIL)["changes"]
    # The acknowledged regression goes after the open one.
    assert [c["agent_name"] for c in listed] == ["support-bot", "research-agent"]
    with pytest.raises(NotFound, match="no change of agent 'research-agent' starts at"):
        acknowledge_change(fleet_db, f"research-agent@{at(40)}", pricer=pricer)
    with pytest.raises(InvalidInput, match="is not AGENT@TIME"):
        acknowledge_change(fleet_db, "research-agent", pricer=pricer)
    with pytest.raises(InvalidInput, match="note: at most 500"):
        acknowledge_change(fleet_db, change_id, pricer=pricer, note="x" * 501)


def test_triage_keeps_the_regression_out_of_the_baseline_until_acknowledged(fleet_db, pricer):
    report = triage_session(fleet_db, "r-9", pricer=pricer)
    baseline = report["baseline"]
    # r-9's window holds r-0..r-8: the six haiku sessions before the change are its baseline.
    assert (baseline["basis"], baseline["sessions"]) == ("before_change", 6)
    first = report["findings"][0]
    assert first["category"] == "change" and first["severity"] == "critical"  # 60x the cost
    assert first["title"].startswith(f"Changed at {at(48)}: model claude-3-haiku -> claude-3-opus")
    assert "obsctl changes ack research-agent@" in first["suggestion"]
    # Against haiku's 24 calls (median 1,060 ms, p95 1,200 ms) every opus call is slow:
    # threshold max(2 x 1,200, 3 x 1,060, 1,000) = 3,180 ms.
    (slow,) = [f for f in report["findings"] if f["category"] == "latency"]
    assert (slow["evidence"]["slow_events"], slow["evidence"]["threshold_ms"]) == (4, 3180.0)

    acknowledge_change(fleet_db, f"research-agent@{at(48)}", pricer=pricer)
    after = triage_session(fleet_db, "r-9", pricer=pricer)
    # Acknowledged: r-6..r-8 ran the same model, so they are the baseline now.
    assert (after["baseline"]["basis"], after["baseline"]["sessions"]) == ("configuration", 3)
    assert after["baseline"]["change"]["acknowledged"] is True
    assert not [f for f in after["findings"] if f["category"] in ("change", "latency")]
    assert after["health_score"] > report["health_score"]


def test_baselines_are_split_by_model(fleet_db, pricer):
    # router's x-6 (gpt-4o) is judged against x-0, x-2, x-4, not against the mini sessions.
    report = triage_session(fleet_db, "x-6", pricer=pricer)
    assert (report["baseline"]["basis"], report["baseline"]["sessions"]) == ("configuration", 3)
    assert report["baseline"]["change"] is None


def test_configuration_and_verdict_rules():
    assert config_of([("a", 10, 0), ("b", 5, 6), (None, 100, 0)], None).model == "b"
    assert config_of([("b", 10, 0), ("a", 10, 0)], None).model == "a"  # a tie: first name
    assert config_of([], None) is None
    assert release_of('{"release": " 2.0 "}') == "2.0" and release_of({"version": 3}) == "3"
    assert release_of("not json") is None and release_of({"release": True}) is None
    assert verdict("llm_p50_ms", 1000, 1499) == "unchanged"
    assert verdict("llm_p50_ms", 1000, 1500) == "regression"
    assert verdict("llm_p50_ms", 100, 300) == "unchanged"  # 3x, but only 200 ms
    assert verdict("cost_per_session_usd", 0.02, 0.01) == "improvement"
    assert verdict("error_event_rate", 2.0, 6.0) == "unchanged"  # 3x, but 4 points
    assert verdict("error_event_rate", 10.0, 15.0) == "regression"
    assert verdict("error_event_rate", None, 5.0) is None


@pytest.fixture
def priced_env(tmp_path, monkeypatch):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(PRICES))
    monkeypatch.setenv("OBSCTL_PRICES", str(path))


def test_cli_and_http_give_the_same_document(priced_env, fleet_db, cli, client):
    result = cli("changes", "--since", SINCE, "--until", UNTIL, "--json")
    assert result.exit_code == 0, result.output
    body = client.get(f"/changes?since={SINCE}&until={UNTIL}").get_json()
    assert orjson.loads(result.stdout) == body and body["total"] == 2
    table = cli("changes", "--since", SINCE, "--until", UNTIL).stdout.splitlines()
    assert table[0] == "changed_at\tagent\tstatus\tchange\tid"
    assert table[1].startswith(f"{at(50)}\tsupport-bot\tregression, not acknowledged\trelease 1.2 -> 1.3")
    acked = cli("changes", "ack", f"research-agent@{at(48)}", "--note", "planned", "--json")
    assert acked.exit_code == 0, acked.output
    assert orjson.loads(acked.stdout)["note"] == "planned"
    put = client.put(f"/changes/research-agent@{at(48)}/acknowledge", json={"note": "x"}).get_json()
    assert put["note"] == "planned"


def test_usage_errors(fleet_db, cli, client):
    bad = cli("changes", "--since", "yesterday")
    assert bad.exit_code == 2 and "since must be an ISO 8601 time" in bad.stderr
    missing = cli("changes", "ack", f"research-agent@{at(41)}")
    assert missing.exit_code != 0 and "no change of agent 'research-agent'" in missing.stderr
    assert client.get("/changes?limit=0").status_code == 400
    assert client.put("/changes/nobody/acknowledge").status_code == 400
    assert client.put(f"/changes/research-agent@{at(41)}/acknowledge").status_code == 404
    assert client.put(f"/changes/research-agent@{at(48)}/acknowledge", data="[1]",
                      content_type="application/json").status_code == 400


def test_the_scorecard_counts_an_open_regression(fleet_db, db_url, tmp_path, pricer):
    from obsctl.config import Settings
    from obsctl.services.scorecards import (
        agent_scorecard,
        fleet_regressions,
        fleet_window,
        get_scorecard,
        list_scorecards,
    )

    settings = Settings.from_env({"OBSCTL_PRICES": str(tmp_path / "prices.json")}, db_url=db_url)
    when = T0 + timedelta(days=6)
    card = get_scorecard(fleet_db, settings, "research-agent", days=7, at=when)
    (change,) = card["changes"]
    assert change["change_id"] == f"research-agent@{at(48)}"
    # LLM p50 1,060 -> 8,600 ms: 100 x 1,060 / 8,600 = 12.33; cost 60x: 100 / 60 = 1.67.
    assert card["breakdown"]["performance"]["change_score"] == 12.33
    assert card["breakdown"]["efficiency"]["change_score"] == 1.67
    assert card["breakdown"]["reliability"]["change_score"] is None
    listed = {c["agent"]: c for c in list_scorecards(fleet_db, settings, days=7, at=when)}
    assert listed["research-agent"]["dimensions"] == card["dimensions"]
    # The dashboard scores a kept fleet with the fleet's regressions: the same card.
    fleet = fleet_window(fleet_db, settings, days=7, at=when)
    regressions = fleet_regressions(fleet_db, settings, fleet)
    assert agent_scorecard(fleet_db, settings, "research-agent", fleet, regressions) == card

    acknowledge_change(fleet_db, change["change_id"], pricer=pricer)
    calm = get_scorecard(fleet_db, settings, "research-agent", days=7, at=when)
    assert calm["changes"] == [] and calm["breakdown"]["performance"]["change_score"] is None
    for name in ("performance", "efficiency"):
        assert calm["dimensions"][name]["score"] > card["dimensions"][name]["score"]
