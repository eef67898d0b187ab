"""`/postmortem` over HTTP and `obsctl postmortem`: reports, candidates, 404s, files, parity."""

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
    return lambda *args: cli(*args, env={"OBSCTL_PRICES": str(prices)})


def check_schema(client, path: str, method: str, body) -> None:
    doc = client.get("/openapi.json").get_json()
    schema = doc["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
    validator = jsonschema_rs.Draft202012Validator({**schema, "components": doc["components"]})
    assert [str(e) for e in validator.iter_errors(body)] == []


def without_generated_at(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "generated_at"}


@pytest.mark.parametrize("scenario,sid", [
    (sc.rate_limit_cascade, "rl"), (sc.token_spike, "spike"), (sc.runaway_loop, "loop"),
    (sc.slow_tool, "slow"), (sc.clean_session, "clean")])
def test_postmortem_matches_the_schema(db, client, scenario, sid):
    scenario(db, sid)
    response = client.post(f"/postmortem/{sid}")
    assert response.status_code == 200
    check_schema(client, "/postmortem/{session_id}", "post", response.get_json())


def test_postmortem_content(db, client):
    sc.rate_limit_cascade(db)
    body = client.post("/postmortem/rl").get_json()
    assert body["severity"] == "SEV-1"
    assert body["contributing_factors"][0]["factor"] == "rate_limit"
    assert body["markdown"].startswith("# Postmortem: ")


def test_unknown_session_is_404(client):
    response = client.post("/postmortem/nope")
    assert response.status_code == 404
    assert response.get_json() == {"error": "session 'nope' not found"}


def test_get_on_a_session_is_405(db, client):
    sc.rate_limit_cascade(db)
    response = client.get("/postmortem/rl")
    assert response.status_code == 405
    assert "POST" in response.headers["Allow"]


def test_candidates_is_a_fixed_route(db, client):
    sc.rate_limit_cascade(db)
    body = client.get("/postmortem/candidates").get_json()
    assert [c["session_id"] for c in body["candidates"]] == ["rl"]
    check_schema(client, "/postmortem/candidates", "get", body)
    # POST /postmortem/candidates is the postmortem of a session named "candidates"
    assert client.post("/postmortem/candidates").status_code == 404
    ingest_events(db, [{"session_id": "candidates", "event_type": "error", "timestamp": sc.ts(0)}])
    assert client.post("/postmortem/candidates").get_json()["session_id"] == "candidates"


def test_candidates_parameters(db, client):
    sc.rate_limit_cascade(db)
    assert client.get("/postmortem/candidates?min_errors=x").status_code == 400
    assert client.get("/postmortem/candidates?limit=500").get_json()["total"] == 1
    assert client.get("/postmortem/candidates?min_errors=6").get_json() == {"candidates": [], "total": 0,
                                                                                 "incidents": []}
    assert client.get("/postmortem/candidates?limit=0").status_code == 400
    assert client.get("/postmortem/candidates?days=0").get_json() == {
        "error": "days must be an integer from 1 to 3650; got 0"}


def test_cli_json_equals_the_api_body(db, client, run):
    sc.rate_limit_cascade(db)
    sc.runaway_loop(db)
    for sid in ("rl", "loop"):
        result = run("postmortem", sid, "--format", "json")
        assert result.exit_code == 0
        api = client.post(f"/postmortem/{sid}").get_json()
        assert without_generated_at(json.loads(result.stdout)) == without_generated_at(api)
    short = json.loads(run("postmortem", "rl", "--json").stdout)
    assert without_generated_at(short) == without_generated_at(json.loads(run("postmortem", "rl", "--format", "json").stdout))
    candidates = run("postmortem", "candidates", "--json")
    assert json.loads(candidates.stdout) == client.get("/postmortem/candidates").get_json()


def test_piped_markdown_is_the_reports_markdown(db, client, run):
    sc.rate_limit_cascade(db)
    assert run("postmortem", "rl").stdout == client.post("/postmortem/rl").get_json()["markdown"]


def test_output_file(db, run, tmp_path):
    sc.rate_limit_cascade(db)
    target = tmp_path / "pm.md"
    result = run("postmortem", "show", "rl", "-o", str(target))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == f"wrote the SEV-1 postmortem of rl to {target}\n"
    assert target.read_text().startswith("# Postmortem: researcher session rl failed")
    as_json = tmp_path / "pm.json"
    run("postmortem", "rl", "--format", "json", "-o", str(as_json))
    assert json.loads(as_json.read_text())["severity"] == "SEV-1"


def test_unwritable_output_is_one_line(db, run, tmp_path):
    sc.rate_limit_cascade(db)
    result = run("postmortem", "rl", "-o", str(tmp_path / "missing" / "pm.md"))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: cannot write ") and result.stderr.count("\n") == 1


def test_cli_errors(db, run):
    result = run("postmortem", "nope")
    assert (result.exit_code, result.stderr) == (1, "Error: session 'nope' not found\n")
    assert run("postmortem", "rl", "--format", "xml").exit_code == 2


def test_candidates_plain_table(db, run):
    sc.rate_limit_cascade(db)
    lines = run("postmortem", "candidates").stdout.splitlines()
    assert lines == ["severity\tsession_id\tagent\tstatus\tstarted_at\terror_events\tbody_events"
                     "\terror_event_rate",
                     f"SEV-1\trl\tresearcher\terror\t{sc.ts(0)}\t5\t6\t83.33"]


def test_terminal_renders_markdown(db, run, terminal):
    sc.rate_limit_cascade(db)
    out = run("postmortem", "rl").stdout
    assert "Postmortem: researcher session rl failed: Rate limiting" in out
    assert "# Postmortem" not in out  # rendered, not raw


def test_help_ends_with_an_example(run):
    for args in (("postmortem", "--help"), ("postmortem", "show", "--help"),
                 ("postmortem", "candidates", "--help")):
        assert "Example: obsctl postmortem" in run(*args).stdout
