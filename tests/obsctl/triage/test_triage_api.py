"""`/triage` over HTTP: reports, the batch, 404s, parameters, schemas and CLI parity."""

from __future__ import annotations

import json

import jsonschema_rs
import pytest

from obsctl.services.ingest import ingest_events
from tests import triage_scenarios as sc


@pytest.fixture
def prices(tmp_path):
    return sc.write_prices(tmp_path)


@pytest.fixture
def client(make_app, prices):
    return make_app({"OBSCTL_PRICES": str(prices)}).test_client()


@pytest.fixture
def run(cli, prices):
    """The CLI with the same price table as the app."""
    return lambda *args: cli(*args, env={"OBSCTL_PRICES": str(prices)})


def check_schema(client, path: str, method: str, body) -> None:
    doc = client.get("/openapi.json").get_json()
    schema = doc["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
    validator = jsonschema_rs.Draft202012Validator({**schema, "components": doc["components"]})
    assert [str(e) for e in validator.iter_errors(body)] == []


def test_triage_report(db, client):
    sc.rate_limit_cascade(db)
    response = client.get("/triage/rl")
    assert response.status_code == 200
    body = response.get_json()
    assert (body["health_score"], body["grade"], body["severity"]) == (36.7, "F", "critical")
    assert response.headers["RateLimit-Limit"] == "120"
    check_schema(client, "/triage/{session_id}", "get", body)


@pytest.mark.parametrize("scenario,sid", [
    (sc.token_spike, "spike"), (sc.runaway_loop, "loop"), (sc.slow_tool, "slow"),
    (sc.clean_session, "clean")])
def test_every_scenario_matches_the_schema(db, client, scenario, sid):
    scenario(db, sid)
    check_schema(client, "/triage/{session_id}", "get", client.get(f"/triage/{sid}").get_json())


def test_unknown_session_is_404(client):
    response = client.get("/triage/nope")
    assert response.status_code == 404
    assert response.get_json() == {"error": "session 'nope' not found"}


def test_batch_is_worst_first(db, client):
    sc.clean_session(db)  # 4 baseline sessions, clean, too-old, other-agent and later
    sc.rate_limit_cascade(db)
    sc.runaway_loop(db)
    body = client.get("/triage/batch?limit=100").get_json()
    scores = [r["health_score"] for r in body["reports"]]
    assert scores == sorted(scores)
    assert body["reports"][0]["session_id"] == "rl"
    assert body["total"] == 10 == len(body["reports"])
    check_schema(client, "/triage/batch", "get", body)


def test_batch_takes_the_most_recent_sessions(db, client):
    sc.clean_session(db)
    body = client.get("/triage/batch?limit=2").get_json()
    # "later" (T0 + 1 h) and "clean" (T0) are the two most recent
    assert sorted(r["session_id"] for r in body["reports"]) == ["clean", "later"]
    assert body["total"] == 8


def test_batch_filters(db, client):
    sc.clean_session(db)
    ingest_events(db, [{"session_id": "tiny", "agent_name": "summarizer", "timestamp": sc.ts(7200)}])
    by_agent = client.get("/triage/batch?agent=someone-else").get_json()
    assert [r["session_id"] for r in by_agent["reports"]] == ["other-agent"]
    big = client.get("/triage/batch?min_events=2&limit=100").get_json()
    assert "tiny" not in {r["session_id"] for r in big["reports"]}
    assert big["total"] == 8


def test_batch_parameters(db, client):
    sc.clean_session(db)
    assert client.get("/triage/batch?limit=abc").status_code == 400
    assert client.get("/triage/batch?min_events=x").get_json()["error"].startswith("query parameter")
    assert client.get("/triage/batch?limit=0").status_code == 400
    assert len(client.get("/triage/batch?limit=5000").get_json()["reports"]) == 8  # capped at 100
    assert client.get("/triage/batch?min_events=-4").get_json() == {
        "error": "min_events must be an integer from 0 to 1000000000; got -4"}


def test_batch_is_a_fixed_route_not_a_session(db, client, run):
    """A session literally named "batch" does not capture /triage/batch; the CLI reaches it
    with `obsctl triage show batch`."""
    ingest_events(db, [{"session_id": "batch", "event_type": "error", "agent_name": "x",
                        "timestamp": sc.ts(0)}])
    body = client.get("/triage/batch").get_json()
    assert set(body) == {"reports", "total", "incidents"}
    assert body["reports"][0]["session_id"] == "batch"
    result = run("triage", "show", "batch", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["session_id"] == "batch"


def test_triage_needs_the_api_key_when_one_is_set(db, make_app):
    sc.clean_session(db)
    client = make_app({"SERVICE_API_KEY": "k"}).test_client()
    assert client.get("/triage/clean").status_code == 401
    assert client.get("/triage/clean", headers={"X-API-Key": "k"}).status_code == 200


def test_cli_json_equals_the_api_body(db, client, run):
    sc.token_spike(db)
    sc.rate_limit_cascade(db)
    for sid in ("spike", "rl"):
        result = run("triage", sid, "--json")
        assert result.exit_code == 0
        assert json.loads(result.stdout) == client.get(f"/triage/{sid}").get_json()
    batch = run("triage", "batch", "--limit", "5", "--min-events", "2", "--json")
    assert json.loads(batch.stdout) == client.get("/triage/batch?limit=5&min_events=2").get_json()


def test_routes_are_documented(client):
    paths = client.get("/openapi.json").get_json()["paths"]
    assert "get" in paths["/triage/batch"] and "get" in paths["/triage/{session_id}"]
