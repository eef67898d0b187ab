"""Evaluating rules: fired/ok/cooldown/no_data, agent filters, tolerance; alert events and ack."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from obsctl.errors import InvalidInput, NotFound
from obsctl.services import alerts
from obsctl.services.alerts import rules as alert_rules
from obsctl.services.ingest import ingest_events
from obsctl.timeutil import format_ts
from tests.conftest import event

AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return AT + timedelta(minutes=minutes)


def ts(minutes_before_at: float) -> str:
    return format_ts(AT - timedelta(minutes=minutes_before_at))


@pytest.fixture
def data(db):
    """alpha: 4 events in the last 10 minutes, 1 an error (25 %); beta: 2 events, no error.
    Overall 1 error in 6 events. Everything else is older than 2 hours."""
    ingest_events(db, [
        event("s1", "session_start", agent_name="alpha", timestamp=ts(10)),
        event("s1", "llm_call", timestamp=ts(9), duration_ms=100),
        event("s1", "llm_call", timestamp=ts(8), duration_ms=200),
        event("s1", "error", timestamp=ts(7)),
        event("s1", "llm_call", timestamp=ts(6), duration_ms=300),
        event("s2", "session_start", agent_name="beta", timestamp=ts(5)),
        event("s2", "llm_call", timestamp=ts(4), duration_ms=1000),
        event("s2", "llm_call", timestamp=ts(3), duration_ms=1000),
        event("old", "error", timestamp=ts(180)),
    ])
    return db


def rule(db, **fields) -> dict:
    body = {"name": "r", "metric": "error_rate", "operator": ">", "threshold": 10, **fields}
    return alert_rules.create_rule(db, body)


def evaluate(db, settings, minutes: float = 0) -> dict:
    return alerts.evaluate_alerts(db, settings, at=at(minutes))


def only_result(body: dict) -> dict:
    assert len(body["results"]) == 1
    return body["results"][0]


def test_a_rule_whose_condition_holds_fires(data, settings):
    r = rule(data, name="errors", window_minutes=30)
    body = evaluate(data, settings)
    assert body["evaluated_at"] == "2026-01-01T12:00:00.000Z"
    assert (body["evaluated"], body["fired"]) == (1, 1)
    result = only_result(body)
    assert result["status"] == "fired"
    assert result["value"] == pytest.approx(100 / 6)
    assert {k: result[k] for k in ("rule_id", "name", "metric", "operator", "threshold")} == {
        "rule_id": r["rule_id"], "name": "errors", "metric": "error_rate", "operator": ">",
        "threshold": 10.0}

    events = alerts.list_alert_events(data)
    assert events["total"] == 1
    alert = events["events"][0]
    assert alert == {
        "alert_id": result["alert_id"], "rule_id": r["rule_id"], "rule_name": "errors",
        "metric": "error_rate", "operator": ">", "threshold": 10.0, "value": result["value"],
        "window_minutes": 30, "agent_filter": None, "fired_at": "2026-01-01T12:00:00.000Z",
        "acknowledged": False, "acknowledged_at": None, "resolved_at": None}
    assert alert_rules.get_rule(data, r["rule_id"])["last_fired_at"] == "2026-01-01T12:00:00.000Z"


def test_a_rule_whose_condition_does_not_hold_is_ok(data, settings):
    rule(data, threshold=50)
    result = only_result(evaluate(data, settings))
    assert result["status"] == "ok" and "alert_id" not in result
    assert alerts.list_alert_events(data)["total"] == 0


def test_no_data_never_fires(data, settings):
    rule(data, agent_filter="nobody", operator="<", threshold=1000)
    rule(data, window_minutes=1, operator="<", threshold=1000)  # nothing in the last minute
    body = evaluate(data, settings)
    assert [(r["status"], r["value"]) for r in body["results"]] == [("no_data", None), ("no_data", None)]
    assert body["fired"] == 0


def test_session_count_is_zero_not_no_data(data, settings):
    rule(data, metric="session_count", agent_filter="nobody", operator="<", threshold=1)
    result = only_result(evaluate(data, settings))
    assert (result["status"], result["value"]) == ("fired", 0)


def test_window_excludes_older_events(data, settings):
    # In the last 5 minutes only beta's two llm calls: no error.
    rule(data, window_minutes=5, operator="==", threshold=0)
    result = only_result(evaluate(data, settings))
    assert (result["status"], result["value"]) == ("fired", 0.0)


def test_agent_filter_scopes_the_rule(data, settings):
    alpha = rule(data, agent_filter="alpha", threshold=20)
    beta = rule(data, agent_filter="beta", threshold=20)
    by_id = {r["rule_id"]: r for r in evaluate(data, settings)["results"]}
    assert (by_id[alpha["rule_id"]]["status"], by_id[alpha["rule_id"]]["value"]) == ("fired", 25.0)
    assert (by_id[beta["rule_id"]]["status"], by_id[beta["rule_id"]]["value"]) == ("ok", 0.0)
    assert alerts.list_alert_events(data)["events"][0]["agent_filter"] == "alpha"


def test_cooldown_suppresses_repeat_firing_until_it_ends(data, settings):
    r = rule(data, cooldown_minutes=15)
    assert only_result(evaluate(data, settings))["status"] == "fired"
    later = only_result(evaluate(data, settings, minutes=5))
    assert later["status"] == "cooldown" and later["value"] == pytest.approx(100 / 6)
    assert "alert_id" not in later
    # Exactly cooldown_minutes later it may fire again.
    assert only_result(evaluate(data, settings, minutes=15))["status"] == "fired"
    assert alerts.list_alert_events(data, rule_id=r["rule_id"])["total"] == 2


@pytest.mark.parametrize("minutes, status", [
    (15 - 1 / 60_000, "cooldown"),  # one millisecond before the cooldown ends
    (15, "fired"),                  # the moment it ends
    (15 + 1 / 60_000, "fired"),
])
def test_cooldown_ends_exactly_cooldown_minutes_after_firing(data, settings, minutes, status):
    rule(data, cooldown_minutes=15)
    assert only_result(evaluate(data, settings))["status"] == "fired"
    assert only_result(evaluate(data, settings, minutes=minutes))["status"] == status


def test_cooldown_zero_fires_every_time(data, settings):
    rule(data, cooldown_minutes=0)
    statuses = [only_result(evaluate(data, settings))["status"] for _ in range(3)]
    assert statuses == ["fired", "fired", "fired"]
    assert alerts.list_alert_events(data)["total"] == 3


def test_cooldown_does_not_hide_an_ok_result(data, settings):
    r = rule(data, cooldown_minutes=60)
    evaluate(data, settings)
    alert_rules.update_rule(data, r["rule_id"], {"threshold": 90})
    # The first evaluation finding the condition gone resolves the alert; later ones are ok.
    assert only_result(evaluate(data, settings, minutes=1))["status"] == "resolved"
    assert only_result(evaluate(data, settings, minutes=2))["status"] == "ok"


def test_disabled_rules_are_not_evaluated(data, settings):
    rule(data, enabled=False)
    enabled = rule(data, threshold=50)
    body = evaluate(data, settings)
    assert body["evaluated"] == 1
    assert [r["rule_id"] for r in body["results"]] == [enabled["rule_id"]]


@pytest.mark.parametrize("operator, threshold, fires", [
    ("==", 25 + 5e-10, True), ("!=", 25 + 5e-10, False),
    ("==", 25.001, False), ("!=", 25.001, True),
    (">=", 25, True), ("<=", 25, True), ("<", 25, False), (">", 25, False),
    (">", 24.99, True), ("<", 25.01, True), (">=", 25.01, False), ("<=", 24.99, False),
])
def test_operators_with_tolerance_on_equality(data, settings, operator, threshold, fires):
    rule(data, agent_filter="alpha", operator=operator, threshold=threshold)
    assert only_result(evaluate(data, settings))["status"] == ("fired" if fires else "ok")


def test_a_rule_deleted_mid_evaluation_does_not_fire(data, settings):
    r = rule(data)
    rules = data.alerts.list_rules(enabled_only=True)
    alert_rules.delete_rule(data, r["rule_id"])
    result = {"rule_id": r["rule_id"], "value": 50.0, "status": "ok"}
    alerts._fire(data, [(rules[0], result)], AT, {})
    assert result["status"] == "ok"
    assert alerts.list_alert_events(data)["total"] == 0


# --- alert events -------------------------------------------------------------------------

@pytest.fixture
def fired(data, settings):
    """Three alerts of rule a (at 12:00, 12:01, 12:02) and one of rule b (12:03)."""
    a = rule(data, name="a", cooldown_minutes=0)
    b = rule(data, name="b", cooldown_minutes=0, enabled=False)
    for minute in range(3):
        evaluate(data, settings, minutes=minute)
    alert_rules.update_rule(data, a["rule_id"], {"enabled": False})
    alert_rules.update_rule(data, b["rule_id"], {"enabled": True})
    evaluate(data, settings, minutes=3)
    return a, b


def test_events_newest_first_with_filters(data, fired):
    a, _ = fired
    listed = alerts.list_alert_events(data)
    assert listed["total"] == 4
    assert [e["rule_name"] for e in listed["events"]] == ["b", "a", "a", "a"]
    assert [e["fired_at"][11:16] for e in listed["events"]] == ["12:03", "12:02", "12:01", "12:00"]
    assert [e["fired_at"] for e in alerts.list_alert_events(data, limit=2)["events"]] == [
        format_ts(at(3)), format_ts(at(2))]
    only_a = alerts.list_alert_events(data, rule_id=a["rule_id"])
    assert only_a["total"] == 3 and {e["rule_id"] for e in only_a["events"]} == {a["rule_id"]}


def test_acknowledge_is_idempotent_and_filters(data, fired):
    newest = alerts.list_alert_events(data)["events"][0]
    first = alerts.acknowledge_alert(data, newest["alert_id"])
    assert first["acknowledged"] is True and first["acknowledged_at"] is not None
    again = alerts.acknowledge_alert(data, newest["alert_id"])
    assert again["acknowledged_at"] == first["acknowledged_at"]
    unacked = alerts.list_alert_events(data, unacknowledged=True)
    assert unacked["total"] == 3 and newest["alert_id"] not in {e["alert_id"] for e in unacked["events"]}
    with pytest.raises(NotFound, match="alert 'nope' not found"):
        alerts.acknowledge_alert(data, "nope")


def test_deleting_a_rule_deletes_its_alert_events(data, fired):
    a, b = fired
    alert_rules.delete_rule(data, a["rule_id"])
    remaining = alerts.list_alert_events(data)
    assert remaining["total"] == 1 and remaining["events"][0]["rule_id"] == b["rule_id"]


def test_events_limit_above_the_maximum_is_capped_below_one_refused(data, fired):
    assert len(alerts.list_alert_events(data, limit=10_000)["events"]) == 4
    assert len(alerts.list_alert_events(data, limit=1)["events"]) == 1
    with pytest.raises(InvalidInput, match=r"limit must be an integer from 1 to 500 .*; got 0"):
        alerts.list_alert_events(data, limit=0)


# --- HTTP and CLI (evaluated now, so the events are recent) -----------------------------------

@pytest.fixture
def recent(db):
    now = datetime.now(UTC)
    ingest_events(db, [
        event("r1", "llm_call", agent_name="alpha", timestamp=format_ts(now - timedelta(minutes=2))),
        event("r1", "error", timestamp=format_ts(now - timedelta(minutes=1))),
    ])
    return db


def test_api_evaluate_events_and_acknowledge(client, recent):
    rule_id = client.post("/alerts/rules", json={"name": "e", "metric": "error_rate", "operator": ">",
                                                 "threshold": 10}).get_json()["rule_id"]
    body = client.post("/alerts/evaluate").get_json()
    assert body["fired"] == 1 and body["results"][0]["value"] == 50.0
    alert_id = body["results"][0]["alert_id"]
    listed = client.get("/alerts/events?unacknowledged=true&limit=5").get_json()
    assert listed["total"] == 1 and listed["events"][0]["alert_id"] == alert_id
    acked = client.put(f"/alerts/events/{alert_id}/acknowledge")
    assert acked.status_code == 200 and acked.get_json()["acknowledged"] is True
    assert client.get("/alerts/events?unacknowledged=true").get_json() == {"events": [], "total": 0}
    assert client.get(f"/alerts/events?rule_id={rule_id}").get_json()["total"] == 1
    assert client.put("/alerts/events/nope/acknowledge").status_code == 404
    assert client.get("/alerts/events?limit=x").status_code == 400
    assert client.get("/alerts/events?unacknowledged=maybe").status_code == 400


def test_cli_evaluate_is_silent_when_nothing_fires(cli, recent):
    cli("alerts", "rules", "add", "--name", "quiet", "--metric", "error_rate", "--operator", ">",
        "--threshold", "90")
    result = cli("alerts", "evaluate", "--exit-code")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_cli_evaluate_prints_one_line_per_fired_alert_and_exit_code(cli, recent):
    for name in ("first", "second"):
        cli("alerts", "rules", "add", "--name", name, "--metric", "error_rate", "--operator", ">",
            "--threshold", "10")
    cli("alerts", "rules", "add", "--name", "ok", "--metric", "error_rate", "--operator", "<",
        "--threshold", "10")
    result = cli("alerts", "evaluate", "--exit-code")
    assert result.exit_code == 3
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("FIRED alert_") and lines[0].endswith("first: error_rate = 50 > 10")
    # Without --exit-code a firing is still success; in cooldown now, so nothing prints.
    again = cli("alerts", "evaluate")
    assert (again.exit_code, again.stdout) == (0, "")


def test_cli_events_and_ack(cli, recent):
    cli("alerts", "rules", "add", "--name", "e", "--metric", "error_rate", "--operator", ">",
        "--threshold", "10")
    body = json.loads(cli("alerts", "evaluate", "--json").stdout)
    alert_id = body["results"][0]["alert_id"]
    listed = json.loads(cli("alerts", "events", "--unacknowledged", "--json").stdout)
    assert [e["alert_id"] for e in listed["events"]] == [alert_id]
    table = cli("alerts", "events").stdout.splitlines()
    assert table[0].split("\t")[:3] == ["alert_id", "fired_at", "rule"]
    assert table[1].split("\t")[0] == alert_id and table[1].split("\t")[-2:] == ["no", "firing"]
    acked = json.loads(cli("alerts", "ack", alert_id, "--json").stdout)
    assert acked["acknowledged"] is True
    assert json.loads(cli("alerts", "events", "--unacknowledged", "--json").stdout)["total"] == 0
    missing = cli("alerts", "ack", "alert_nope")
    assert missing.exit_code == 1 and missing.stderr == "Error: alert 'alert_nope' not found\n"


def test_cli_json_equals_api_body(cli, client, recent):
    client.post("/alerts/rules", json={"name": "n", "metric": "avg_tokens", "operator": ">",
                                       "threshold": 1e9})
    api = client.post("/alerts/evaluate").get_json()
    cli_body = json.loads(cli("alerts", "evaluate", "--json").stdout)
    assert api.pop("evaluated_at") and cli_body.pop("evaluated_at")
    assert cli_body == api
    client.put(f"/alerts/rules/{api['results'][0]['rule_id']}", json={"threshold": -1, "cooldown_minutes": 0})
    client.post("/alerts/evaluate")
    assert json.loads(cli("alerts", "events", "--json").stdout) == client.get("/alerts/events").get_json()
