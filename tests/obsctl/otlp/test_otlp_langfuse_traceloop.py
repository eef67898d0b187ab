"""What the Langfuse SDKs (3.15 and 5.0) and Traceloop's SDK (0.62) really send, replayed byte for
byte from tests/data/otlp/ against the real app with an API key set: Langfuse's export path and
Basic authentication, Langfuse's observation attributes, and Traceloop's metrics export."""

from __future__ import annotations

import base64

import pytest

from tests.otlp_recordings import RECORDINGS, replay, session_events

KEY = "s3cret-key"


def basic(user: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def keyed(make_app):
    return make_app({"SERVICE_API_KEY": KEY}).test_client()


def events_of(client, session_id: str) -> list[dict]:
    response = client.get(f"/sessions/{session_id}", headers={"X-API-Key": KEY})
    assert response.status_code == 200, response.data
    return response.get_json()["events"]


@pytest.mark.parametrize("version", ["v3", "v5"])
def test_langfuse_sdk_export_is_understood(keyed, version):
    answers = replay(keyed, f"langfuse-{version}", basic("pk-lf-test", KEY))
    assert [(path, status) for path, status, _ in answers] == [("/api/public/otel/v1/traces", 200)]

    session_id = f"capture-langfuse-{version}-session-1"
    events = events_of(keyed, session_id)
    by_type: dict[str, list[dict]] = {}
    for event in events:
        by_type.setdefault(event["event_type"], []).append(event)
    # Two runs of the agent: one whose third model call answers, one whose model call fails.
    assert sorted(e["agent_name"] for e in by_type["agent_run"] + by_type.get("error", [])
                  if e.get("parent_id") is None) == ["support_agent", "support_agent"]
    calls = by_type["llm_call"]
    assert len(calls) == 3
    assert {c["model"] for c in calls} == {"gpt-4o-mini-2024-07-18"}
    assert sorted((c["tokens_in"], c["tokens_out"]) for c in calls) == [(100, 20), (150, 30), (150, 30)]
    assert calls[0]["input_data"]["tools"][0]["function"]["name"] == "get_weather"

    tools = {e["tool_call"]["name"]: e for e in by_type["tool_call"] + by_type["tool_error"]}
    assert tools["get_weather"]["event_type"] == "tool_call"
    assert tools["get_weather"]["tool_call"]["input"] == {"city": "Paris"}
    assert tools["get_weather"]["tool_call"]["output"] == {"city": "Paris", "forecast": "sunny", "celsius": 21}
    assert tools["lookup_order"]["event_type"] == "tool_error"
    assert tools["lookup_order"]["tool_call"]["input"] == {"order_id": "A-1"}
    assert tools["lookup_order"]["output_data"]["error"] == "order service unavailable for A-1"

    failed = [e for e in by_type["error"] if e.get("model") == "gpt-4o-mini"]
    assert len(failed) == 1 and failed[0]["output_data"]["error"].startswith("Error code: 500")

    session = keyed.get(f"/sessions/{session_id}", headers={"X-API-Key": KEY}).get_json()
    assert (session["total_tokens_in"], session["total_tokens_out"]) == (400, 80)
    assert session["agent_name"] == "support_agent"


def test_langfuse_path_refuses_a_wrong_secret_key(keyed):
    answers = replay(keyed, "langfuse-v5", basic("pk-lf-test", "sk-lf-wrong"))
    assert [status for _, status, _ in answers] == [401]
    assert replay(keyed, "langfuse-v5", {})[0][1] == 401
    assert keyed.get("/sessions", headers={"X-API-Key": KEY}).get_json()["total"] == 0


def test_traceloop_export_with_metrics_is_answered_without_a_failure(keyed):
    answers = replay(keyed, "traceloop", {"Authorization": f"Bearer {KEY}"})
    assert [(path, status) for path, status, _ in answers] == [
        ("/v1/traces", 200), ("/v1/metrics", 200), ("/v1/logs", 200), ("/v1/metrics", 200)]
    # An empty ExportMetricsServiceResponse: full success, nothing for the exporter to report.
    assert [body for path, _, body in answers if path == "/v1/metrics"] == [b"", b""]
    session, by_type = session_events(keyed, "capture-traceloop-session-1", {"X-API-Key": KEY})
    assert session["agent_name"] == "support_conversation"
    # Task and tool values are JSON encoded once more by the SDK; they are stored as what they are.
    tool = by_type["tool_call"][0]["tool_call"]
    assert (tool["name"], tool["input"]) == ("get_weather", {"city": "Paris"})
    assert tool["output"] == {"city": "Paris", "forecast": "sunny", "celsius": 21}
    assert {"value": "Paris is sunny, 21 C; order A-1 could not be looked up."} in [
        e["output_data"] for e in by_type["decision"]]
    failed = by_type["tool_error"][0]
    assert (failed["tool_call"]["input"], failed["output_data"]["error"]) == (
        {"order_id": "A-1"}, "order service unavailable for A-1")


def test_metrics_are_refused_without_the_key_and_when_they_are_not_metrics(keyed):
    body = (RECORDINGS / "traceloop" / "bodies" / "0002.bin").read_bytes()
    protobuf = {"Content-Type": "application/x-protobuf"}
    assert keyed.post("/v1/metrics", data=body, headers=protobuf).status_code == 401
    with_key = {**protobuf, "X-API-Key": KEY}
    garbage = keyed.post("/v1/metrics", data=b"\xff\xff\xff", headers=with_key)
    assert garbage.status_code == 400
    assert "ExportMetricsServiceRequest" in garbage.get_json()["error"]
    json_key = {"Content-Type": "application/json", "X-API-Key": KEY}
    assert keyed.post("/v1/metrics", data=b"[1, 2]", headers=json_key).status_code == 400
    empty = keyed.post("/v1/metrics", data=b'{"resourceMetrics": []}', headers=json_key)
    assert (empty.status_code, empty.get_json()) == (200, {})
    assert keyed.post("/v1/metrics", data=body, headers={"Content-Type": "text/plain", "X-API-Key": KEY}
                      ).status_code == 415
