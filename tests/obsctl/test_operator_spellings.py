"""Operator spellings are the same everywhere: the symbols, or the words lt gt le/lte ge/gte eq
ne in any case, accepted by the alerts and SLA CLIs and HTTP routes alike and stored as the
symbol. Messages about JSON values use JSON's names ("got boolean true", not "got True")."""

from __future__ import annotations

import json

import pytest

RULE = {"name": "r", "metric": "error_rate", "threshold": 5}
TARGET = {"agent_name": "bot", "metric": "error_rate", "target_value": 5}


@pytest.mark.parametrize("spelling,symbol", [(">", ">"), ("gt", ">"), ("GT", ">"), ("ge", ">="),
                                             ("gte", ">="), ("lt", "<"), ("le", "<="), ("LTE", "<="),
                                             ("eq", "=="), ("ne", "!="), ("!=", "!=")])
def test_alert_rule_operators_are_normalised_in_cli_and_http(cli, client, spelling, symbol):
    created = client.post("/alerts/rules", json={**RULE, "operator": spelling})
    assert created.status_code == 201 and created.get_json()["operator"] == symbol
    result = cli("alerts", "rules", "add", "--name", "r", "--metric", "error_rate", "--operator", spelling,
                 "--threshold", "5", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["operator"] == symbol
    assert {r["operator"] for r in client.get("/alerts/rules").get_json()["rules"]} == {symbol}


def test_alert_rule_update_normalises_the_operator_too(cli, client):
    rule_id = client.post("/alerts/rules", json={**RULE, "operator": ">"}).get_json()["rule_id"]
    assert client.put(f"/alerts/rules/{rule_id}", json={"operator": "ne"}).get_json()["operator"] == "!="
    result = cli("alerts", "rules", "update", rule_id, "--operator", "le", "--json")
    assert json.loads(result.stdout)["operator"] == "<="


@pytest.mark.parametrize("spelling,symbol", [("<=", "<="), ("le", "<="), ("lte", "<="), ("LE", "<="),
                                             (">=", ">="), ("ge", ">="), ("gte", ">=")])
def test_sla_operators_are_normalised_in_cli_and_http(cli, client, spelling, symbol):
    response = client.put("/sla/targets", json={**TARGET, "operator": spelling})
    assert response.status_code in (200, 201) and response.get_json()["operator"] == symbol
    result = cli("sla", "set", "bot", "error_rate", spelling, "5", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["operator"] == symbol


@pytest.mark.parametrize("spelling", ["lt", "gt", "<", "==", "ne", "=<", ""])
def test_sla_refuses_the_same_spellings_in_cli_and_http(cli, client, spelling):
    message = f"operator must be one of <= >= (or the words le, lte, ge, gte); got {spelling!r}"
    response = client.put("/sla/targets", json={**TARGET, "operator": spelling})
    assert (response.status_code, response.get_json()) == (400, {"error": message})
    result = cli("sla", "set", "bot", "error_rate", spelling, "5")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == f"Error: Invalid value for 'OPERATOR': {message}"


def test_the_openapi_document_lists_every_accepted_spelling(client):
    schemas = client.get("/openapi.json").get_json()["components"]["schemas"]
    rule_ops = schemas["AlertRuleInput"]["properties"]["operator"]["enum"]
    assert set(rule_ops) == {"<", ">", "<=", ">=", "==", "!=", "lt", "gt", "le", "lte", "ge", "gte", "eq", "ne"}
    assert schemas["AlertRule"]["properties"]["operator"]["enum"] == ["<", ">", "<=", ">=", "==", "!="]
    assert set(schemas["SlaTargetInput"]["properties"]["operator"]["enum"]) == {"<=", ">=", "le", "lte", "ge", "gte"}


@pytest.mark.parametrize("field,value,shown", [
    ("threshold", True, "threshold must be a finite number; got boolean true"),
    ("threshold", None, "threshold must be a finite number; got null"),
    ("threshold", "5", "threshold must be a finite number; got '5'"),
    ("window_minutes", True, "window_minutes must be an integer from 1 to 43200; got boolean true"),
    ("metric", None, "metric must be one of avg_duration_ms, p95_duration_ms, error_rate, "
                     "tool_error_rate, avg_tokens, avg_cost, session_count, or avg_score:NAME; got null"),
    ("operator", False, "operator must be one of < > <= >= == != (or the words lt, gt, le, lte, ge, "
                        "gte, eq, ne); got boolean false"),
    ("enabled", "yes", "enabled must be true or false; got 'yes'"),
])
def test_rule_messages_name_json_types(client, field, value, shown):
    response = client.post("/alerts/rules", json={**RULE, "operator": ">", field: value})
    assert (response.status_code, response.get_json()) == (400, {"error": shown})


def test_sla_target_value_boolean_message(client):
    response = client.put("/sla/targets", json={**TARGET, "operator": "<=", "target_value": False})
    assert response.get_json() == {"error": "target_value must be a finite number; got boolean false"}


def test_cli_threshold_must_be_finite(cli):
    result = cli("alerts", "rules", "add", "--name", "r", "--metric", "error_rate", "--operator", "gt",
                 "--threshold", "inf")
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("threshold must be a finite number; got inf")
