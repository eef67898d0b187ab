"""SLA targets: upsert (201 created / 200 updated), list, delete by body or query, and the
validation of every field (service, HTTP and CLI)."""

from __future__ import annotations

import orjson
import pytest

from obsctl.errors import InvalidInput, NotFound
from obsctl.services import sla

TARGET = {"agent_name": "alpha", "metric": "error_rate", "operator": "<=", "target_value": 5}


def test_put_creates_then_updates(db):
    created, was_new = sla.put_target(db, TARGET)
    assert was_new is True
    assert {k: created[k] for k in ("agent_name", "metric", "operator", "target_value", "window_hours")} == {
        "agent_name": "alpha", "metric": "error_rate", "operator": "<=", "target_value": 5.0,
        "window_hours": 24}
    updated, was_new = sla.put_target(db, {**TARGET, "target_value": 2.5, "operator": ">="})
    assert was_new is False
    assert (updated["operator"], updated["target_value"]) == (">=", 2.5)
    assert updated["created_at"] == created["created_at"]
    assert updated["updated_at"] >= created["updated_at"]
    assert sla.list_targets(db)["total"] == 1


def test_update_without_window_keeps_the_window(db):
    sla.put_target(db, {**TARGET, "window_hours": 72})
    assert sla.put_target(db, TARGET)[0]["window_hours"] == 72
    assert sla.put_target(db, {**TARGET, "window_hours": 1})[0]["window_hours"] == 1


def test_list_is_ordered_by_agent_then_metric(db):
    for agent, metric in [("beta", "avg_cost"), ("alpha", "session_count"), ("alpha", "avg_tokens")]:
        sla.put_target(db, {**TARGET, "agent_name": agent, "metric": metric})
    listed = sla.list_targets(db)
    assert [(t["agent_name"], t["metric"]) for t in listed["targets"]] == [
        ("alpha", "avg_tokens"), ("alpha", "session_count"), ("beta", "avg_cost")]
    assert listed["total"] == 3


@pytest.mark.parametrize("change,message", [
    ({"metric": "latency"}, "metric must be one of avg_duration_ms"),
    ({"metric": {}}, "metric must be one of avg_duration_ms"),  # unhashable: not a 500
    ({"operator": "<"}, "operator must be one of <= >="),
    ({"target_value": "5"}, "target_value must be a finite number"),
    ({"target_value": True}, "target_value must be a finite number"),
    ({"target_value": float("nan")}, "target_value must be a finite number"),
    ({"agent_name": ""}, "agent_name must be a non-empty string"),
    ({"agent_name": 7}, "agent_name must be a non-empty string"),
    ({"window_hours": 0}, "window_hours must be an integer from 1 to 8760"),
    ({"window_hours": 8761}, "window_hours must be an integer from 1 to 8760"),
    ({"window_hours": 1.5}, "window_hours must be an integer from 1 to 8760"),
    ({"colour": "red"}, "unknown SLA target field 'colour'"),
])
def test_invalid_fields(db, change, message):
    with pytest.raises(InvalidInput, match=message):
        sla.put_target(db, {**TARGET, **change})


def test_missing_fields_are_named(db):
    with pytest.raises(InvalidInput, match="missing required SLA target fields: metric, operator"):
        sla.put_target(db, {"agent_name": "a", "target_value": 1})
    with pytest.raises(InvalidInput, match="must be a JSON object"):
        sla.put_target(db, [TARGET])


def test_delete_and_unknown_pair(db):
    sla.put_target(db, TARGET)
    assert sla.delete_target(db, "alpha", "error_rate") == {
        "deleted": True, "agent_name": "alpha", "metric": "error_rate"}
    with pytest.raises(NotFound, match="no SLA target for agent 'alpha' and metric 'error_rate'"):
        sla.delete_target(db, "alpha", "error_rate")
    with pytest.raises(InvalidInput):
        sla.delete_target(db, "alpha", None)


# --- HTTP ---------------------------------------------------------------------------------

def test_http_put_is_201_then_200(client):
    r = client.put("/sla/targets", json=TARGET)
    assert r.status_code == 201
    assert r.get_json()["window_hours"] == 24
    r = client.put("/sla/targets", json={**TARGET, "target_value": 3})
    assert r.status_code == 200
    assert r.get_json()["target_value"] == 3.0
    assert client.get("/sla/targets").get_json()["total"] == 1


def test_http_bad_bodies_are_400(client):
    assert client.put("/sla/targets", data="{nope", content_type="application/json").status_code == 400
    assert client.put("/sla/targets").status_code == 400
    r = client.put("/sla/targets", json={**TARGET, "operator": "=="})
    assert r.status_code == 400
    assert r.get_json() == {"error": "operator must be one of <= >= (or the words le, lte, ge, gte); "
                                     "got '=='"}


def test_http_delete_by_json_body(client):
    client.put("/sla/targets", json=TARGET)
    r = client.delete("/sla/targets", json={"agent_name": "alpha", "metric": "error_rate"})
    assert r.status_code == 200
    assert r.get_json() == {"deleted": True, "agent_name": "alpha", "metric": "error_rate"}
    r = client.delete("/sla/targets", json={"agent_name": "alpha", "metric": "error_rate"})
    assert r.status_code == 404
    assert "no SLA target" in r.get_json()["error"]


def test_http_delete_by_query_parameters(client):
    client.put("/sla/targets", json=TARGET)
    assert client.delete("/sla/targets?agent_name=alpha&metric=error_rate").status_code == 200
    assert client.get("/sla/targets").get_json() == {"targets": [], "total": 0}


@pytest.mark.parametrize("kwargs", [
    {},                                               # nothing at all
    {"json": {"agent_name": "alpha"}},                # metric missing
    {"json": ["alpha", "error_rate"]},                # not an object
    {"json": {"agent_name": "alpha", "metric": "bogus"}},
])
def test_http_delete_needs_the_pair(client, kwargs):
    r = client.delete("/sla/targets", **kwargs)
    assert r.status_code == 400
    assert "error" in r.get_json()


# --- CLI ----------------------------------------------------------------------------------

def test_cli_set_list_remove(cli):
    r = cli("sla", "set", "alpha", "p95_duration_ms", "<=", "2000", "--window-hours", "12")
    assert r.exit_code == 0, r.output
    assert r.stdout == "created: alpha p95_duration_ms <= 2000 over 12h\n"
    r = cli("sla", "set", "alpha", "p95_duration_ms", "le", "1500")
    assert r.stdout == "updated: alpha p95_duration_ms <= 1500 over 12h\n"
    lines = cli("sla", "list").stdout.splitlines()
    assert lines[0] == "agent\tmetric\ttarget\twindow\tupdated_at"
    assert lines[1].split("\t")[:4] == ["alpha", "p95_duration_ms", "<= 1500", "12h"]
    assert cli("sla", "remove", "alpha", "p95_duration_ms").stdout == "removed: alpha p95_duration_ms\n"
    r = cli("sla", "remove", "alpha", "p95_duration_ms")
    assert r.exit_code == 1
    assert r.stderr == "Error: no SLA target for agent 'alpha' and metric 'p95_duration_ms'\n"


def test_cli_invalid_metric_is_a_usage_error(cli):
    r = cli("sla", "set", "alpha", "nope", "<=", "1")
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines()[-1].startswith(
        "Error: Invalid value for 'METRIC': metric must be one of avg_duration_ms, ")


def test_cli_json_equals_the_api_body(cli, client):
    created = orjson.loads(cli("sla", "set", "alpha", "error_rate", ">=", "1", "--json").stdout)
    listed = client.get("/sla/targets").get_json()
    assert listed["targets"] == [created]
    assert orjson.loads(cli("sla", "list", "--json").stdout) == listed
    assert orjson.loads(cli("sla", "remove", "alpha", "error_rate", "--json").stdout) == {
        "deleted": True, "agent_name": "alpha", "metric": "error_rate"}


def test_delete_with_a_json_body_over_real_http(live_server):
    import requests

    server = live_server()
    url = f"{server.url}/sla/targets"
    assert requests.put(url, json=TARGET, timeout=10).status_code == 201
    assert requests.put(url, json=TARGET, timeout=10).status_code == 200
    r = requests.delete(url, json={"agent_name": "alpha", "metric": "error_rate"}, timeout=10)
    assert (r.status_code, r.json()) == (200, {"deleted": True, "agent_name": "alpha",
                                               "metric": "error_rate"})
    assert requests.delete(url, json={"agent_name": "alpha", "metric": "error_rate"},
                           timeout=10).status_code == 404
