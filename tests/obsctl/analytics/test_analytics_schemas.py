"""Real explain/export/compare/analytics responses validate against their OpenAPI schemas
(what schemathesis will fuzz against), including nullable fields."""

import jsonschema_rs
import pytest

from obsctl.services.ingest import ingest_events
from tests.conftest import event


def seed(db):
    ingest_events(db, [
        event("a", "session_start", agent_name="bot", timestamp="2026-03-01T10:00:00Z", metadata={"k": 1}),
        event("a", model="gpt-4o", tokens_in=3, tokens_out=4, duration_ms=1.5,
              input_data={"prompt": "x"}, timestamp="2026-03-01T10:00:01Z"),
        event("a", "tool_call", tool_call={"name": "t", "error": "e"}, timestamp="2026-03-01T10:00:02Z"),
        event("a", "session_end", timestamp="2026-03-01T10:00:03Z"),
        # Active, no durations, no model: the nullable and zero cases.
        event("b", "decision", decision_trace={"reasoning": "r"}, timestamp="2026-03-01T11:00:00Z"),
    ])


def validator_for(doc: dict, path: str, method: str, status: str = "200",
                  media: str = "application/json"):
    schema = doc["paths"][path][method]["responses"][status]["content"][media]["schema"]
    return jsonschema_rs.Draft202012Validator({**schema, "components": doc["components"]})


@pytest.fixture
def doc(client):
    return client.get("/openapi.json").get_json()


def assert_valid(validator, body):
    errors = [str(e) for e in validator.iter_errors(body)]
    assert errors == []


def test_analytics_matches_schema(db, client, doc):
    check = validator_for(doc, "/analytics", "get")
    assert_valid(check, client.get("/analytics").get_json())  # empty database: nulls
    seed(db)
    assert_valid(check, client.get("/analytics").get_json())


@pytest.mark.parametrize("session_id", ["a", "b"])
def test_explain_and_export_match_schemas(db, client, doc, session_id):
    seed(db)
    explain = validator_for(doc, "/sessions/{session_id}/explain", "get")
    assert_valid(explain, client.get(f"/sessions/{session_id}/explain").get_json())
    export = validator_for(doc, "/sessions/{session_id}/export", "get")
    assert_valid(export, client.get(f"/sessions/{session_id}/export").get_json())


def test_compare_matches_schema(db, client, doc):
    seed(db)
    check = validator_for(doc, "/sessions/compare", "post")
    body = client.post("/sessions/compare", json={"session_a": "b", "session_b": "a"}).get_json()
    assert body["deltas"]["total_tokens"]["percent"] is None
    assert_valid(check, body)


def test_error_responses_match_schema(db, client, doc):
    for path, method, status, response in [
        ("/sessions/{session_id}/export", "get", "400", client.get("/sessions/x/export?format=pdf")),
        ("/sessions/{session_id}/explain", "get", "404", client.get("/sessions/x/explain")),
        ("/sessions/compare", "post", "400", client.post("/sessions/compare", json={})),
    ]:
        assert str(response.status_code) == status
        ref = doc["paths"][path][method]["responses"][status]["$ref"].split("/")[-1]
        schema = doc["components"]["responses"][ref]["content"]["application/json"]["schema"]
        check = jsonschema_rs.Draft202012Validator({**schema, "components": doc["components"]})
        assert_valid(check, response.get_json())
