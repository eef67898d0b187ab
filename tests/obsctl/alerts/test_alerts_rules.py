"""Alert rules: create, list, update, delete through the service, the API and the CLI."""

from __future__ import annotations

import json

import pytest

from obsctl.errors import InvalidInput, NotFound
from obsctl.services.alerts import rules as alert_rules

RULE = {"name": "error spike", "metric": "error_rate", "operator": ">", "threshold": 5}


def test_create_applies_defaults(db):
    rule = alert_rules.create_rule(db, RULE)
    assert rule["rule_id"].startswith("rule_")
    assert {k: rule[k] for k in ("name", "metric", "operator", "threshold", "window_minutes",
                                 "cooldown_minutes", "agent_filter", "enabled", "last_fired_at")} == {
        "name": "error spike", "metric": "error_rate", "operator": ">", "threshold": 5.0,
        "window_minutes": 60, "cooldown_minutes": 15, "agent_filter": None, "enabled": True,
        "last_fired_at": None}
    assert rule["created_at"] == rule["updated_at"]


def test_create_with_every_field(db):
    rule = alert_rules.create_rule(db, {**RULE, "window_minutes": 43200, "cooldown_minutes": 0,
                                        "agent_filter": "agent-a", "enabled": False})
    assert (rule["window_minutes"], rule["cooldown_minutes"], rule["agent_filter"], rule["enabled"]) == (
        43200, 0, "agent-a", False)


@pytest.mark.parametrize("missing", ["name", "metric", "operator", "threshold"])
def test_required_fields(db, missing):
    body = {k: v for k, v in RULE.items() if k != missing}
    with pytest.raises(InvalidInput, match=f"missing required rule field: {missing}"):
        alert_rules.create_rule(db, body)


@pytest.mark.parametrize("field, value, fragment", [
    ("metric", "latency", "metric must be one of avg_duration_ms, p95_duration_ms, error_rate"),
    ("operator", "=>", "operator must be one of < > <= >= == !="),
    ("metric", {}, "metric must be one of"),
    ("operator", ["<"], "operator must be one of"),
    ("threshold", "5", "threshold must be a finite number"),
    ("threshold", True, "threshold must be a finite number"),
    ("threshold", None, "threshold must be a finite number"),
    ("window_minutes", 0, "window_minutes must be an integer from 1 to 43200"),
    ("window_minutes", 43201, "window_minutes must be an integer from 1 to 43200"),
    ("window_minutes", 1.5, "window_minutes must be an integer"),
    ("cooldown_minutes", -1, "cooldown_minutes must be an integer from 0"),
    ("enabled", "yes", "enabled must be true or false"),
    ("name", "  ", "name must be a non-empty string"),
    ("agent_filter", 7, "agent_filter must be an agent name"),
    ("colour", "red", "unknown rule field 'colour'"),
])
def test_invalid_fields_name_the_valid_values(db, field, value, fragment):
    with pytest.raises(InvalidInput) as info:
        alert_rules.create_rule(db, {**RULE, field: value})
    assert fragment in info.value.message


def test_list_in_creation_order(db):
    first = alert_rules.create_rule(db, RULE)
    second = alert_rules.create_rule(db, {**RULE, "name": "second", "enabled": False})
    data = alert_rules.list_rules(db)
    assert data["total"] == 2
    assert [r["rule_id"] for r in data["rules"]] == [first["rule_id"], second["rule_id"]]
    assert data["rules"][1]["enabled"] is False


def test_partial_update_changes_only_given_fields(db):
    rule = alert_rules.create_rule(db, {**RULE, "agent_filter": "a"})
    updated = alert_rules.update_rule(db, rule["rule_id"], {"threshold": 10, "enabled": False})
    assert updated["threshold"] == 10.0 and updated["enabled"] is False
    assert updated["name"] == "error spike" and updated["agent_filter"] == "a"
    assert updated["updated_at"] >= rule["updated_at"]
    cleared = alert_rules.update_rule(db, rule["rule_id"], {"agent_filter": None})
    assert cleared["agent_filter"] is None


def test_update_accepts_a_rule_read_back_from_the_api(db):
    rule = alert_rules.create_rule(db, RULE)
    again = alert_rules.update_rule(db, rule["rule_id"], {**rule, "name": "renamed", "rule_id": "other"})
    assert again["rule_id"] == rule["rule_id"] and again["name"] == "renamed"


def test_update_validates_and_404s(db):
    rule = alert_rules.create_rule(db, RULE)
    with pytest.raises(InvalidInput, match="operator must be one of"):
        alert_rules.update_rule(db, rule["rule_id"], {"operator": "~"})
    with pytest.raises(NotFound, match="alert rule 'nope' not found"):
        alert_rules.update_rule(db, "nope", {"threshold": 1})


def test_delete(db):
    rule = alert_rules.create_rule(db, RULE)
    assert alert_rules.delete_rule(db, rule["rule_id"]) == {"deleted": True, "rule_id": rule["rule_id"]}
    assert alert_rules.list_rules(db)["total"] == 0
    with pytest.raises(NotFound):
        alert_rules.delete_rule(db, rule["rule_id"])


# --- HTTP ---------------------------------------------------------------------------------

def test_api_crud(client):
    created = client.post("/alerts/rules", json=RULE)
    assert created.status_code == 201
    rule = created.get_json()
    rule_id = rule["rule_id"]
    assert client.get("/alerts/rules").get_json() == {"rules": [rule], "total": 1}
    assert client.get(f"/alerts/rules/{rule_id}").get_json() == rule
    updated = client.put(f"/alerts/rules/{rule_id}", json={"cooldown_minutes": 0})
    assert updated.status_code == 200 and updated.get_json()["cooldown_minutes"] == 0
    deleted = client.delete(f"/alerts/rules/{rule_id}")
    assert deleted.get_json() == {"deleted": True, "rule_id": rule_id}
    assert client.get(f"/alerts/rules/{rule_id}").status_code == 404


def test_api_errors_are_json(client):
    bad = client.post("/alerts/rules", json={**RULE, "metric": "nope"})
    assert bad.status_code == 400 and "error_rate" in bad.get_json()["error"]
    assert client.post("/alerts/rules", data="{", content_type="application/json").status_code == 400
    assert client.post("/alerts/rules", json=[1]).status_code == 400
    missing = client.put("/alerts/rules/nope", json={"threshold": 1})
    assert missing.status_code == 404 and missing.get_json() == {"error": "alert rule 'nope' not found"}
    assert client.delete("/alerts/rules/nope").status_code == 404


def test_api_metrics_catalogue(client):
    body = client.get("/alerts/metrics").get_json()
    assert body["total"] == 8
    assert [m["name"] for m in body["metrics"]] == [
        "avg_duration_ms", "p95_duration_ms", "error_rate", "tool_error_rate", "avg_tokens",
        "avg_cost", "session_count", "avg_score:NAME"]
    assert all(m["description"] for m in body["metrics"])


# --- CLI ----------------------------------------------------------------------------------

def test_cli_add_list_update_remove(cli):
    added = cli("alerts", "rules", "add", "--name", "slow", "--metric", "p95_duration_ms",
                "--operator", ">=", "--threshold", "2500", "--window-minutes", "30",
                "--cooldown-minutes", "0", "--agent-filter", "agent-a", "--disabled", "--json")
    assert added.exit_code == 0, added.output
    rule = json.loads(added.stdout)
    assert (rule["threshold"], rule["window_minutes"], rule["cooldown_minutes"], rule["agent_filter"],
            rule["enabled"]) == (2500.0, 30, 0, "agent-a", False)

    listed = cli("alerts", "rules", "list")
    lines = listed.stdout.splitlines()
    assert lines[0].split("\t") == ["rule_id", "name", "metric", "condition", "window", "cooldown",
                                    "agent", "severity", "enabled", "last_fired_at"]
    assert lines[1].split("\t") == [rule["rule_id"], "slow", "p95_duration_ms", ">= 2500", "30m", "0m",
                                    "agent-a", "warning", "no", "-"]  # never fired: no value

    updated = cli("alerts", "rules", "update", rule["rule_id"], "--enable", "--agent-filter", "",
                  "--json")
    assert json.loads(updated.stdout)["enabled"] is True
    assert json.loads(updated.stdout)["agent_filter"] is None

    removed = cli("alerts", "rules", "remove", rule["rule_id"], "--json")
    assert json.loads(removed.stdout) == {"deleted": True, "rule_id": rule["rule_id"]}


def test_cli_enable_and_disable_together_is_a_usage_error(cli, client):
    rule = client.post("/alerts/rules", json=RULE).get_json()
    both = cli("alerts", "rules", "update", rule["rule_id"], "--disable", "--enable")
    assert both.exit_code == 2
    assert both.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--enable' / '--disable': they contradict each other; give one of "
        "them to turn the rule on or off")
    assert client.get(f"/alerts/rules/{rule['rule_id']}").get_json() == rule
    off = cli("alerts", "rules", "update", rule["rule_id"], "--disable", "--json")
    assert json.loads(off.stdout)["enabled"] is False


def test_cli_bad_option_values_are_usage_errors(cli):
    result = cli("alerts", "rules", "add", "--name", "x", "--metric", "nope", "--operator", ">",
                 "--threshold", "1")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--metric': metric must be one of avg_duration_ms, p95_duration_ms, "
        "error_rate, tool_error_rate, avg_tokens, avg_cost, session_count, or avg_score:NAME; got 'nope'")


def test_cli_missing_rule_is_one_line_exit_1(cli, db):
    missing = cli("alerts", "rules", "remove", "rule_nope")
    assert missing.exit_code == 1 and "not found" in missing.stderr


def test_cli_json_equals_api_body(cli, client):
    rule = client.post("/alerts/rules", json=RULE).get_json()
    assert json.loads(cli("alerts", "rules", "list", "--json").stdout) == client.get("/alerts/rules").get_json()
    assert json.loads(cli("alerts", "metrics", "--json").stdout) == client.get("/alerts/metrics").get_json()
    assert rule in json.loads(cli("alerts", "rules", "list", "--json").stdout)["rules"]
