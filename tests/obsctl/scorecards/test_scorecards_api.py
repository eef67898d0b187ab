"""Scorecards over HTTP and on the command line: status codes, `days`, CLI/API parity,
terminal/pipe output and the OpenAPI schemas of real responses."""

from __future__ import annotations

from datetime import timedelta

import jsonschema_rs
import pytest

from obsctl.services.ingest import ingest_events
from obsctl.timeutil import now
from tests.conftest import use_prices
from tests.obsctl.scorecards.test_scorecards import EXPECTED, PRICES, fleet_events, llm, session


@pytest.fixture
def prices_env(tmp_path) -> dict:
    import orjson

    path = tmp_path / "prices.json"
    path.write_bytes(orjson.dumps(PRICES))
    return {"OBSCTL_PRICES": str(path)}


@pytest.fixture
def client(make_app, prices_env):
    return make_app(prices_env).test_client()


@pytest.fixture
def fleet(db, tmp_path):
    # Relative to the real clock: the routes take "now" themselves. Costed at ingest.
    use_prices(db, tmp_path, PRICES)
    ingest_events(db, fleet_events(now()))
    return db


def test_list_is_the_bare_array_best_first(fleet, client):
    r = client.get("/scorecards")
    assert r.status_code == 200
    body = r.get_json()
    assert [(c["agent"], c["overall_score"], c["grade"]) for c in body] == [
        (agent, EXPECTED[agent][0], EXPECTED[agent][1]) for agent in ("delta", "beta", "alpha")]


def test_days_query_parameter(fleet, client):
    assert len(client.get("/scorecards?days=10").get_json()) == 4
    assert {c["period_days"] for c in client.get("/scorecards?days=10").get_json()} == {10}
    # Only delta's sessions (10-12 hours ago) started in the last day.
    assert [c["agent"] for c in client.get("/scorecards?days=1").get_json()] == ["delta"]


@pytest.mark.parametrize("query", ["days=0", "days=366", "days=abc", "days=1.5", "days="])
def test_bad_days_is_a_400(fleet, client, query):
    for path in ("/scorecards", "/scorecards/alpha"):
        r = client.get(f"{path}?{query}")
        assert r.status_code == 400
        assert "days" in r.get_json()["error"]


def test_detail_and_404(fleet, client):
    body = client.get("/scorecards/alpha").get_json()
    assert body["overall_score"] == 73.75
    assert set(body) >= {"breakdown", "trend", "since", "until", "fleet_agents"}
    assert len(body["trend"]) == 7
    r = client.get("/scorecards/nobody")
    assert r.status_code == 404
    assert r.get_json() == {"error": "no sessions of agent 'nobody' started in the last 7 days"}
    assert client.get("/scorecards/gamma").status_code == 404
    assert client.get("/scorecards/gamma?days=10").status_code == 200


def test_agent_names_with_a_slash(db, client):
    ingest_events(db, session("s", "team/bot", timedelta(hours=1), [llm(5)], at=now()))
    assert client.get("/scorecards/team/bot").get_json()["agent"] == "team/bot"


def test_responses_match_the_openapi_schemas(fleet, client):
    doc = client.get("/openapi.json").get_json()
    for path, url in (("/scorecards", "/scorecards"), ("/scorecards/{agent}", "/scorecards/delta"),
                      ("/scorecards/{agent}", "/scorecards/alpha?days=3")):
        schema = doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        validator = jsonschema_rs.Draft202012Validator({**schema, "components": doc["components"]})
        assert [str(e) for e in validator.iter_errors(client.get(url).get_json())] == []


def test_cli_json_equals_the_api_body(fleet, client, cli, prices_env):
    import orjson

    listed = cli("scorecards", "--days", "10", "--json", env=prices_env)
    assert listed.exit_code == 0, listed.output
    assert orjson.loads(listed.stdout) == client.get("/scorecards?days=10").get_json()

    shown = cli("scorecards", "show", "alpha", "--json", env=prices_env)
    assert shown.exit_code == 0, shown.output
    from_cli, from_api = orjson.loads(shown.stdout), client.get("/scorecards/alpha").get_json()
    # The window ends "now", which moves by a few milliseconds between the two calls.
    for body in (from_cli, from_api):
        body.pop("since"), body.pop("until")
        for point in body["trend"]:
            point.pop("start"), point.pop("end")
    assert from_cli == from_api


def test_cli_listing_is_tab_separated_when_piped(fleet, cli, prices_env):
    result = cli("scorecards", env=prices_env)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split("\t") == ["agent", "overall", "reliability", "performance", "efficiency",
                                    "throughput", "sessions"]
    assert lines[3].split("\t") == ["alpha", "73.75 B-", "50.00 D", "70.00 B-", "100.00 A+",
                                    "75.00 B-", "2"]


def test_cli_show_prints_json_when_piped(fleet, cli, prices_env):
    import orjson

    result = cli("scorecards", "show", "beta", env=prices_env)
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout)["overall_score"] == 76.95


def test_cli_show_on_a_terminal_gives_every_rate_its_denominator(fleet, cli, prices_env, terminal):
    result = cli("scorecards", "show", "alpha", env={**prices_env, "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "error events 1 of 10 (10.00%), error sessions 1 of 2 (50.00%)" in out
    assert "completed 1 of 2 (50.00%)" in out
    assert "1 of 9 (11.11%)" in out  # the trend day of session a1


def test_cli_errors_are_one_line(fleet, cli):
    result = cli("scorecards", "show", "nobody")
    assert result.exit_code == 1
    assert result.stderr == "Error: no sessions of agent 'nobody' started in the last 7 days\n"
    result = cli("scorecards", "--days", "0")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--days': days must be an integer from 1 to 365; got 0")


def test_cli_group_help_lists_show(cli):
    result = cli("scorecards", "--help")
    assert result.exit_code == 0
    assert "show" in result.stdout and "--days" in result.stdout
