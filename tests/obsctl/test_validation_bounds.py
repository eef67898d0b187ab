"""One rule for every bound, the same in the CLI and the HTTP API.

Out of range is a usage error in the CLI (exit 2, "Invalid value for '--opt': <message>") and a
400 `{"error": <message>}` over HTTP, with the same message naming the range. The one
exception is a page size (`limit`): above its maximum it counts as the maximum (the spec caps
the session list at 200). Integer query parameters are plain ASCII integers: `1_0`, padded
spaces and `+1`, which Python's int() accepts, are refused.
"""

from __future__ import annotations

import json

import pytest

from obsctl.errors import InvalidInput
from obsctl.params import IntParam
from obsctl.services.ingest import ingest_events
from tests.conftest import event

LIMIT_200 = "limit must be an integer from 1 to 200 (a larger limit counts as 200)"
LIMIT_100 = "limit must be an integer from 1 to 100 (a larger limit counts as 100)"
LIMIT_500 = "limit must be an integer from 1 to 500 (a larger limit counts as 500)"

# (CLI arguments, the option Click names, HTTP query path, message)
QUERY_CASES = [
    (["sessions", "list", "--limit", "0"], "--limit", "/sessions?limit=0", f"{LIMIT_200}; got 0"),
    (["sessions", "list", "--limit", "-1"], "--limit", "/sessions?limit=-1", f"{LIMIT_200}; got -1"),
    (["sessions", "list", "--offset", "-5"], "--offset", "/sessions?offset=-5",
     "offset must be an integer from 0 to 1000000000; got -5"),
    (["sessions", "list", "--offset", "1000000001"], "--offset", "/sessions?offset=1000000001",
     "offset must be an integer from 0 to 1000000000; got 1000000001"),
    (["sessions", "list", "--status", "bogus"], "--status", "/sessions?status=bogus",
     "status must be one of active, completed, error; got 'bogus'"),
    (["postmortem", "candidates", "--days", "0"], "--days", "/postmortem/candidates?days=0",
     "days must be an integer from 1 to 3650; got 0"),
    (["postmortem", "candidates", "--limit", "0"], "--limit", "/postmortem/candidates?limit=0",
     f"{LIMIT_100}; got 0"),
    (["postmortem", "candidates", "--min-errors", "-1"], "--min-errors",
     "/postmortem/candidates?min_errors=-1", "min_errors must be an integer from 0 to 1000000000; got -1"),
    (["triage", "batch", "--limit", "-3"], "--limit", "/triage/batch?limit=-3", f"{LIMIT_100}; got -3"),
    (["triage", "batch", "--min-events", "-1"], "--min-events", "/triage/batch?min_events=-1",
     "min_events must be an integer from 0 to 1000000000; got -1"),
    (["scorecards", "--days", "0"], "--days", "/scorecards?days=0",
     "days must be an integer from 1 to 365; got 0"),
    (["scorecards", "show", "bot", "--days", "366"], "--days", "/scorecards/bot?days=366",
     "days must be an integer from 1 to 365; got 366"),
    (["sla", "history", "--hours", "0"], "--hours", "/sla/history?hours=0",
     "hours must be an integer from 1 to 87600; got 0"),
    (["sla", "history", "--limit", "0"], "--limit", "/sla/history?limit=0",
     "limit must be an integer from 1 to 10000 (a larger limit counts as 10000); got 0"),
    (["alerts", "events", "--limit", "0"], "--limit", "/alerts/events?limit=0", f"{LIMIT_500}; got 0"),
    (["webhooks", "deliveries", "--limit", "0"], "--limit", "/webhooks/deliveries?limit=0",
     f"{LIMIT_500}; got 0"),
    (["webhooks", "deliveries", "--status", "lost"], "--status", "/webhooks/deliveries?status=lost",
     "status must be one of pending, delivered, failed; got 'lost'"),
]


def usage_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("args,option,path,message", QUERY_CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_out_of_range_query_values_are_400_and_cli_usage_errors(cli, client, args, option, path, message):
    response = client.get(path)
    assert (response.status_code, response.get_json()) == (400, {"error": message})
    assert usage_error_line(cli(*args)) == f"Error: Invalid value for '{option}': {message}"


RULE = {"name": "r", "metric": "error_rate", "operator": ">", "threshold": 5}
RULE_ARGS = ["alerts", "rules", "add", "--name", "r", "--metric", "error_rate", "--operator", ">",
             "--threshold", "5"]
OPERATORS_WITH_WORDS = "< > <= >= == != (or the words lt, gt, le, lte, ge, gte, eq, ne)"

# (CLI arguments, the option Click names, HTTP method, path, body, message)
BODY_CASES = [
    (RULE_ARGS + ["--window-minutes", "0"], "--window-minutes", "post", "/alerts/rules",
     {**RULE, "window_minutes": 0}, "window_minutes must be an integer from 1 to 43200; got 0"),
    (RULE_ARGS + ["--cooldown-minutes", "-1"], "--cooldown-minutes", "post", "/alerts/rules",
     {**RULE, "cooldown_minutes": -1}, "cooldown_minutes must be an integer from 0 to 525600; got -1"),
    (RULE_ARGS[:-4] + ["--operator", "bigger", "--threshold", "5"], "--operator", "post",
     "/alerts/rules", {**RULE, "operator": "bigger"},
     f"operator must be one of {OPERATORS_WITH_WORDS}; got 'bigger'"),
    (["sla", "set", "bot", "error_rate", "<=", "5", "--window-hours", "8761"], "--window-hours", "put",
     "/sla/targets", {"agent_name": "bot", "metric": "error_rate", "operator": "<=", "target_value": 5,
                      "window_hours": 8761}, "window_hours must be an integer from 1 to 8760; got 8761"),
    (["sla", "set", "bot", "error_rate", "lt", "5"], "OPERATOR", "put", "/sla/targets",
     {"agent_name": "bot", "metric": "error_rate", "operator": "lt", "target_value": 5},
     "operator must be one of <= >= (or the words le, lte, ge, gte); got 'lt'"),
    (["sla", "set", "bot", "errors", "<=", "5"], "METRIC", "put", "/sla/targets",
     {"agent_name": "bot", "metric": "errors", "operator": "<=", "target_value": 5},
     "metric must be one of avg_duration_ms, p95_duration_ms, error_rate, tool_error_rate, avg_tokens, "
     "avg_cost, session_count, or avg_score:NAME; got 'errors'"),
]


@pytest.mark.parametrize("args,option,method,path,body,message", BODY_CASES,
                         ids=lambda v: v if isinstance(v, str) and v.startswith(("-", "O", "M")) else None)
def test_bad_body_fields_are_400_and_the_same_cli_option_a_usage_error(cli, client, args, option, method,
                                                                       path, body, message):
    response = getattr(client, method)(path, json=body)
    assert (response.status_code, response.get_json()) == (400, {"error": message})
    assert usage_error_line(cli(*args)) == f"Error: Invalid value for '{option}': {message}"


@pytest.mark.empty_db
def test_a_usage_error_stops_before_the_database_is_created(cli, db_path):
    cli("sessions", "list", "--limit", "0")
    cli("prune", "--older-than", "1000000d")
    assert not db_path.exists()


def test_a_limit_above_its_maximum_counts_as_the_maximum_in_both(db, cli, client):
    ingest_events(db, [event(f"s{i:03d}") for i in range(205)])
    body = client.get("/sessions?limit=1000000000000000000000").get_json()
    assert len(body["sessions"]) == 200 and body["total"] == 205
    assert json.loads(cli("sessions", "list", "--limit", "5000", "--json").stdout) == body


@pytest.mark.parametrize("raw", ["1_0", "%2010", "10%20", "+10", "%D9%A1%D9%A0", "1.0", "0x10", "1e2", ""])
def test_integer_query_parameters_are_plain_ascii_integers(client, raw):
    response = client.get(f"/sessions?limit={raw}")
    assert response.status_code == 400
    assert response.get_json()["error"].startswith("query parameter 'limit' must be an integer, got ")


def _integer_query_params(doc):
    for path, operations in doc["paths"].items():
        get = operations.get("get")
        if not get:
            continue
        for param in get.get("parameters", []):
            if param["in"] == "query" and param["schema"].get("type") == "integer":
                yield path, param


def test_every_documented_integer_bound_is_what_the_route_enforces(client):
    """The OpenAPI minimum/maximum of every integer query parameter is exactly the range the
    route accepts (schemathesis relies on it), and a documented `limit` without a maximum is
    one that caps instead of refusing."""
    doc = client.get("/openapi.json").get_json()
    checked = 0
    for path, param in _integer_query_params(doc):
        url = path.replace("{agent}", "bot").replace("{session_id}", "research-002")
        name, schema = param["name"], param["schema"]

        required = "q=timeout&" if path == "/search" else ""  # the query parameters a route needs

        def status(value, name=name, url=url, required=required):
            return client.get(f"{url}?{required}{name}={value}").status_code

        assert status(schema["minimum"]) != 400, (path, name)
        assert status(schema["minimum"] - 1) == 400, (path, name)
        assert status("1_0") == 400 and status("%201") == 400, (path, name)
        if "maximum" in schema:
            assert status(schema["maximum"]) != 400, (path, name)
            assert status(schema["maximum"] + 1) == 400, (path, name)
        else:
            assert name == "limit", f"{path} {name} has no documented maximum"
            assert status(10**30) != 400, (path, name)
        checked += 1
    assert checked >= 24  # found them: every integer query parameter of the API (24 today)


def test_int_param_refuses_booleans_and_fractions_and_takes_integral_floats():
    days = IntParam("days", 1, 365, default=7)
    assert days.check(None) == 7 and days.check(30.0) == 30
    for bad, shown in [(True, "boolean true"), (1.5, "1.5"), ("3", "'3'"), (0, "0")]:
        with pytest.raises(InvalidInput) as info:
            days.check(bad)
        assert info.value.message == f"days must be an integer from 1 to 365; got {shown}"
    with pytest.raises(InvalidInput, match="got null"):
        days.check(None, nullable=False)


def test_every_integer_option_of_the_cli_checks_its_range():
    """No integer option is left to Typer's unbounded int (or its min/max, whose message does
    not name the range): each goes through an IntParam check."""
    import typer

    from obsctl.cli.main import app
    from tests.obsctl.test_cli_help import walk

    unchecked = [(" ".join(path), param.name)
                 for path, command in walk(typer.main.get_command(app), ("obsctl",))
                 for param in getattr(command, "params", [])
                 if param.bare_type() == "int" and param.callback is None]
    assert unchecked == []
    integer_options = [param for _, command in walk(typer.main.get_command(app), ("obsctl",))
                       for param in getattr(command, "params", []) if param.bare_type() == "int"]
    assert len(integer_options) >= 20  # the check above looks at something


@pytest.mark.parametrize("args,message", [
    (["ingest", "--batch-size", "0", "-"], "batch_size must be an integer from 1 to 100000; got 0"),
    (["serve", "--port", "70000"], "port must be an integer from 0 to 65535; got 70000"),
    (["serve", "--threads", "0"], "threads must be an integer from 1 to 256; got 0"),
])
def test_cli_only_bounds_follow_the_same_rule(cli, args, message):
    option = args[1]
    assert usage_error_line(cli(*args)) == f"Error: Invalid value for '{option}': {message}"
