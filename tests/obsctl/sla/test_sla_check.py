"""SLA checks, history and summary: statuses from the metrics engine, one snapshot per
target, history order and `hours`, summary sections, exit codes and CLI/API parity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jsonschema_rs
import msgspec
import orjson
import pytest

from obsctl.errors import InvalidInput
from obsctl.services import sla
from obsctl.services.ingest import ingest_events
from obsctl.services.sla.summary import sla_summary
from obsctl.timeutil import format_ts, now

AT = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)

# name -> (agent, metric, operator, target, expected actual, expected status)
TARGETS = {
    "alpha errors": ("alpha", "error_rate", "<=", 30, 25.0, "pass"),          # 1 error in 4 events
    "alpha sessions": ("alpha", "session_count", ">=", 2, 2.0, "pass"),        # exactly at target
    "alpha latency": ("alpha", "avg_duration_ms", "<=", 100, 150.0, "fail"),   # (100 + 200) / 2
    "beta sessions": ("beta", "session_count", ">=", 5, 1.0, "fail"),
    "beta errors": ("beta", "error_rate", "<=", 0, 100.0, "fail"),
    "gamma errors": ("gamma", "error_rate", "<=", 5, None, "no_data"),         # no sessions
}


def fleet(at: datetime) -> list[dict]:
    def t(minutes):
        return format_ts(at - timedelta(minutes=minutes))
    return [
        {"event_type": "session_start", "session_id": "a1", "agent_name": "alpha", "timestamp": t(120)},
        {"event_type": "llm_call", "session_id": "a1", "timestamp": t(119), "duration_ms": 100},
        {"event_type": "tool_call", "session_id": "a1", "timestamp": t(118), "duration_ms": 200,
         "tool_call": {"name": "search"}},
        {"event_type": "error", "session_id": "a1", "timestamp": t(117)},
        {"event_type": "session_start", "session_id": "a2", "agent_name": "alpha", "timestamp": t(60)},
        {"event_type": "llm_call", "session_id": "a2", "timestamp": t(59)},
        {"event_type": "session_start", "session_id": "b1", "agent_name": "beta", "timestamp": t(180)},
        {"event_type": "timeout", "session_id": "b1", "timestamp": t(179)},
        # Older than any 24-hour window: never counted.
        {"event_type": "error", "session_id": "old", "agent_name": "alpha", "timestamp": t(60 * 30)},
    ]


def put_targets(db):
    for agent, metric, operator, target, _, _ in TARGETS.values():
        sla.put_target(db, {"agent_name": agent, "metric": metric, "operator": operator,
                            "target_value": target})


@pytest.fixture
def checked(db, settings):
    ingest_events(db, fleet(AT))
    put_targets(db)
    return sla.check_sla(db, settings, at=AT)


def test_check_statuses_and_values(checked):
    assert checked["checked_at"] == "2026-06-10T12:00:00.000Z"
    got = {(r["agent_name"], r["metric"]): (r["actual_value"], r["status"]) for r in checked["results"]}
    assert got == {(a, m): (actual, status) for a, m, _, _, actual, status in TARGETS.values()}
    assert (checked["passed"], checked["failed"], checked["no_data"]) == (2, 3, 1)
    assert [(r["agent_name"], r["metric"]) for r in checked["results"]] == sorted(got)
    assert list(checked["results"][0]) == ["agent_name", "metric", "operator", "target_value",
                                           "actual_value", "status"]


@pytest.mark.parametrize("operator, target, status", [
    ("<=", 25, "pass"),             # alpha's error rate is exactly 25.0: equal meets <=
    ("<=", 24.999999, "fail"),
    (">=", 25, "pass"),             # and equal meets >=
    (">=", 25.000001, "fail"),
])
def test_a_value_equal_to_the_target_meets_it(db, settings, operator, target, status):
    ingest_events(db, fleet(AT))
    sla.put_target(db, {"agent_name": "alpha", "metric": "error_rate", "operator": operator,
                        "target_value": target})
    (result,) = sla.check_sla(db, settings, at=AT)["results"]
    assert (result["actual_value"], result["status"]) == (25.0, status)


def test_window_hours_bounds_the_metric(db, settings):
    ingest_events(db, fleet(AT))
    sla.put_target(db, {"agent_name": "alpha", "metric": "session_count", "operator": ">=",
                        "target_value": 2, "window_hours": 1})
    # Only a2 started in the last hour.
    assert sla.check_sla(db, settings, at=AT)["results"][0]["actual_value"] == 1.0


def test_each_check_records_one_snapshot_per_target(db, settings, checked):
    history = sla.sla_history(db, at=AT)
    assert history["total"] == len(TARGETS)
    assert [{k: v for k, v in s.items() if k != "checked_at"} for s in history["snapshots"]] == \
        checked["results"]
    assert {s["checked_at"] for s in history["snapshots"]} == {"2026-06-10T12:00:00.000Z"}


def test_no_targets_checks_nothing(db, settings):
    assert sla.check_sla(db, settings, at=AT) == {"checked_at": "2026-06-10T12:00:00.000Z",
                                                  "results": [], "passed": 0, "failed": 0,
                                                  "no_data": 0}
    assert sla.sla_history(db, at=AT) == {"snapshots": [], "total": 0}


def test_history_is_newest_first_and_bounded_by_hours(db, settings):
    ingest_events(db, fleet(AT))
    sla.put_target(db, {"agent_name": "alpha", "metric": "error_rate", "operator": "<=", "target_value": 30})
    sla.put_target(db, {"agent_name": "beta", "metric": "error_rate", "operator": "<=", "target_value": 0})
    for hours_ago in (5, 2, 0):
        sla.check_sla(db, settings, at=AT - timedelta(hours=hours_ago))
    history = sla.sla_history(db, at=AT)
    assert [s["checked_at"][11:16] for s in history["snapshots"]] == [
        "12:00", "12:00", "10:00", "10:00", "07:00", "07:00"]
    assert [s["agent_name"] for s in history["snapshots"][:2]] == ["alpha", "beta"]
    # `hours` reaches back exactly that far: a check 2 hours ago is inside hours=2.
    assert sla.sla_history(db, hours=2, at=AT)["total"] == 4
    assert sla.sla_history(db, hours=1, at=AT)["total"] == 2
    only_beta = sla.sla_history(db, agent_name="beta", at=AT)
    assert {s["agent_name"] for s in only_beta["snapshots"]} == {"beta"} and only_beta["total"] == 3
    limited = sla.sla_history(db, limit=1, at=AT)
    assert len(limited["snapshots"]) == 1 and limited["total"] == 6


@pytest.mark.parametrize("hours", [0, -1, 87601])
def test_history_hours_must_be_in_range(db, hours):
    with pytest.raises(InvalidInput, match="hours must be an integer from 1 to 87600"):
        sla.sla_history(db, hours=hours)


def test_summary_sections(db, checked):
    summary = msgspec.to_builtins(sla_summary(db))
    # 2 pass, 3 fail; no_data left out of the rate.
    assert summary["overall_pass_rate"] == 40.0
    assert (summary["targets"], summary["passed"], summary["failed"], summary["no_data"],
            summary["unchecked"]) == (6, 2, 3, 1, 0)
    assert summary["last_checked_at"] == "2026-06-10T12:00:00.000Z"
    assert [(a["agent_name"], a["targets"], a["pass_rate"]) for a in summary["agents"]] == [
        ("alpha", 3, 66.67), ("beta", 2, 0.0), ("gamma", 1, None)]
    # Zero target first (no relative scale), then 80% (1 vs >= 5), then 50% (150 vs <= 100).
    assert [(o["agent_name"], o["metric"], o["miss_percent"]) for o in summary["worst_offenders"]] == [
        ("beta", "error_rate", None), ("beta", "session_count", 80.0),
        ("alpha", "avg_duration_ms", 50.0)]
    # session_count 2 vs >= 2 is at the edge; error_rate 25 vs <= 30 is 16.67% away: not at risk.
    assert [(r["agent_name"], r["metric"], r["margin_percent"]) for r in summary["at_risk"]] == [
        ("alpha", "session_count", 0.0)]
    assert summary["worst_offenders"][0]["checked_at"] == "2026-06-10T12:00:00.000Z"


def test_summary_uses_the_latest_check_and_current_targets(db, settings, checked):
    sla.put_target(db, {"agent_name": "alpha", "metric": "avg_duration_ms", "operator": "<=",
                        "target_value": 160})
    sla.delete_target(db, "beta", "error_rate")
    sla.put_target(db, {"agent_name": "delta", "metric": "avg_tokens", "operator": "<=", "target_value": 1})
    summary = msgspec.to_builtins(sla_summary(db))
    assert summary["unchecked"] == 1 and summary["targets"] == 6
    # Still the old result for alpha latency until the next check; beta error_rate is gone.
    assert [o["metric"] for o in summary["worst_offenders"]] == ["session_count", "avg_duration_ms"]
    sla.check_sla(db, settings, at=AT + timedelta(minutes=1))
    summary = msgspec.to_builtins(sla_summary(db))
    assert summary["worst_offenders"][0]["metric"] == "session_count"
    # 150 vs <= 160 passes and is within 10% (6.25%).
    assert ("alpha", "avg_duration_ms", 6.25) in [
        (r["agent_name"], r["metric"], r["margin_percent"]) for r in summary["at_risk"]]
    assert summary["overall_pass_rate"] == 75.0  # 3 of 4 with a result (2 no data)


def test_summary_without_checks(db):
    sla.put_target(db, {"agent_name": "a", "metric": "error_rate", "operator": "<=", "target_value": 1})
    assert msgspec.to_builtins(sla_summary(db)) == {"overall_pass_rate": None, "targets": 1, "passed": 0, "failed": 0,
                               "no_data": 0, "unchecked": 1, "last_checked_at": None,
                               "agents": [{"agent_name": "a", "targets": 1, "passed": 0, "failed": 0,
                                           "no_data": 0, "unchecked": 1, "pass_rate": None}],
                               "worst_offenders": [], "at_risk": []}


# --- HTTP and CLI -------------------------------------------------------------------------

@pytest.fixture
def live_fleet(db):
    """The same fleet relative to the real clock (HTTP and CLI checks run "now")."""
    ingest_events(db, fleet(now()))
    put_targets(db)
    return db


def test_http_check_history_summary(live_fleet, client):
    r = client.post("/sla/check")
    assert r.status_code == 200
    body = r.get_json()
    assert (body["passed"], body["failed"], body["no_data"]) == (2, 3, 1)
    history = client.get("/sla/history?agent_name=alpha&hours=1").get_json()
    assert history["total"] == 3
    assert client.get("/sla/summary").get_json()["overall_pass_rate"] == 40.0
    for query in ("hours=abc", "hours=0", "limit=x", "limit=", "hours="):
        r = client.get(f"/sla/history?{query}")
        assert r.status_code == 400 and "error" in r.get_json()


def test_http_responses_match_the_openapi_schemas(live_fleet, client):
    doc = client.get("/openapi.json").get_json()

    def check(path, method, response, status=200):
        assert response.status_code == status
        schema = doc["paths"][path][method]["responses"][str(status)]["content"]["application/json"]["schema"]
        validator = jsonschema_rs.Draft202012Validator({**schema, "components": doc["components"]})
        assert [str(e) for e in validator.iter_errors(response.get_json())] == []

    target = {"agent_name": "zeta", "metric": "avg_cost", "operator": ">=", "target_value": 0}
    check("/sla/targets", "put", client.put("/sla/targets", json=target), 201)
    check("/sla/targets", "put", client.put("/sla/targets", json=target), 200)
    check("/sla/targets", "get", client.get("/sla/targets"))
    check("/sla/check", "post", client.post("/sla/check"))
    check("/sla/history", "get", client.get("/sla/history"))
    check("/sla/summary", "get", client.get("/sla/summary"))
    check("/sla/targets", "delete", client.delete("/sla/targets", json=target | {"target_value": None}))


def test_cli_check_exit_codes(live_fleet, cli):
    r = cli("sla", "check")
    assert r.exit_code == 0  # failures are reported, but the exit code needs --exit-code
    lines = r.stdout.splitlines()
    assert lines[0] == "agent\tmetric\ttarget\tactual\tstatus"
    assert "beta\tsession_count\t>= 5\t1\tfail" in lines
    assert cli("sla", "check", "--exit-code").exit_code == 3
    quiet = cli("sla", "check", "--quiet")
    assert [line.split("\t")[-1] for line in quiet.stdout.splitlines()[1:]] == ["fail"] * 3


def test_cli_quiet_check_is_silent_when_all_pass(db, cli):
    ingest_events(db, fleet(now()))
    sla.put_target(db, {"agent_name": "alpha", "metric": "error_rate", "operator": "<=", "target_value": 30})
    r = cli("sla", "check", "--quiet", "--exit-code")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")


def test_cli_json_equals_the_api_body(live_fleet, cli, client):
    checked = orjson.loads(cli("sla", "check", "--json").stdout)
    from_api = client.post("/sla/check").get_json()
    assert checked["results"] == from_api["results"]  # checked_at differs: "now" moved on
    assert orjson.loads(cli("sla", "summary", "--json").stdout) == client.get("/sla/summary").get_json()
    assert orjson.loads(cli("sla", "history", "--json").stdout) == client.get("/sla/history").get_json()
    history = orjson.loads(cli("sla", "history", "--agent", "beta", "--hours", "2", "--json").stdout)
    assert history == client.get("/sla/history?agent_name=beta&hours=2").get_json()
    assert history["total"] == 4


def test_cli_summary_is_json_when_piped_and_history_is_tsv(live_fleet, cli):
    cli("sla", "check")
    assert orjson.loads(cli("sla", "summary").stdout)["overall_pass_rate"] == 40.0
    lines = cli("sla", "history", "--agent", "gamma").stdout.splitlines()
    assert lines[0] == "checked_at\tagent\tmetric\ttarget\tactual\tstatus"
    assert lines[1].split("\t")[1:] == ["gamma", "error_rate", "<= 5", "-", "no_data"]
