"""Compare two sessions: exact summaries and deltas on hand-built sessions, API and CLI."""

import json

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions.compare import compare_sessions, delta
from tests.conftest import event


def seed(db):
    ingest_events(db, [
        event("a", "session_start", agent_name="bot", timestamp="2026-03-01T10:00:00Z",
              metadata={"run": 1}),
        event("a", model="gpt-4o", tokens_in=100, tokens_out=50, duration_ms=200,
              timestamp="2026-03-01T10:00:01Z"),
        event("a", model="gpt-4o", tokens_in=300, tokens_out=100, duration_ms=400,
              timestamp="2026-03-01T10:00:02Z"),
        event("a", "tool_call", tool_call={"name": "search"}, duration_ms=100,
              timestamp="2026-03-01T10:00:03Z"),
        event("a", "session_end", timestamp="2026-03-01T10:00:10Z"),
        event("b", "session_start", agent_name="bot", timestamp="2026-03-02T10:00:00Z"),
        event("b", model="gpt-4o", tokens_in=50, tokens_out=25, duration_ms=150,
              timestamp="2026-03-02T10:00:01Z"),
        event("b", model="claude", tokens_in=150, tokens_out=25, duration_ms=250,
              timestamp="2026-03-02T10:00:02Z"),
        event("b", "tool_call", tool_call={"name": "search", "error": "503"}, duration_ms=50,
              timestamp="2026-03-02T10:00:03Z"),
        event("b", "tool_call", tool_call={"name": "fetch"}, duration_ms=30,
              timestamp="2026-03-02T10:00:04Z"),
    ])


def without_time(body: dict) -> dict:
    return {k: v for k, v in body.items() if k != "compared_at"}


def test_session_summaries_are_exact(db):
    seed(db)
    result = compare_sessions(db, "a", "b")
    assert result["session_a"] == {
        "session_id": "a", "agent_name": "bot", "status": "completed",
        "tokens_in": 400, "tokens_out": 150, "total_tokens": 550,
        "tokens_cache_read": 0, "tokens_cache_write": 0, "tokens_reasoning": 0,
        "event_count": 5, "error_count": 0,
        # genai-prices' gpt-4o: $2.50 / $10 per million tokens in / out.
        "cost_usd": 0.0025, "unpriced_calls": 0,
        "total_processing_ms": 700.0, "avg_event_duration_ms": 233.333,
        "session_duration_ms": 10000.0,
        "models": {"gpt-4o": {"calls": 2, "tokens_in": 400, "tokens_out": 150,
                              "duration_ms": 600.0, "avg_duration_ms": 300.0}},
        "event_types": {"llm_call": 2, "session_end": 1, "session_start": 1, "tool_call": 1},
        "tools": {"search": {"calls": 1, "total_duration": 100.0}},
        "metadata": {"run": 1},
    }
    b = result["session_b"]
    assert (b["status"], b["tokens_in"], b["tokens_out"], b["event_count"], b["error_count"]) == (
        "active", 200, 50, 5, 1)
    # gpt-4o's 50 + 25 tokens priced; "claude" names no known model: one unpriced call.
    assert (b["cost_usd"], b["unpriced_calls"]) == (0.000375, 1)
    assert b["total_processing_ms"] == 480.0
    assert b["avg_event_duration_ms"] == 120.0
    # Still active: measured to the last event.
    assert b["session_duration_ms"] == 4000.0
    assert b["models"] == {
        "claude": {"calls": 1, "tokens_in": 150, "tokens_out": 25, "duration_ms": 250.0, "avg_duration_ms": 250.0},
        "gpt-4o": {"calls": 1, "tokens_in": 50, "tokens_out": 25, "duration_ms": 150.0, "avg_duration_ms": 150.0}}
    assert b["tools"] == {"fetch": {"calls": 1, "total_duration": 30.0},
                          "search": {"calls": 1, "total_duration": 50.0}}
    assert b["metadata"] is None


def test_deltas_are_b_relative_to_a(db):
    seed(db)
    deltas = compare_sessions(db, "a", "b")["deltas"]
    assert deltas == {
        "total_tokens": {"absolute": -300, "percent": -54.55},
        "tokens_in": {"absolute": -200, "percent": -50.0},
        "tokens_out": {"absolute": -100, "percent": -66.67},
        # Neither reported cache or reasoning tokens: 0 apart, no percent of a zero baseline.
        **dict.fromkeys(("tokens_cache_read", "tokens_cache_write", "tokens_reasoning"),
                        {"absolute": 0, "percent": None}),
        "event_count": {"absolute": 0, "percent": 0.0},
        # Zero baseline: the percent is null (DECISIONS).
        "error_count": {"absolute": 1, "percent": None},
        "total_processing_ms": {"absolute": -220.0, "percent": -31.43},
        "avg_event_duration_ms": {"absolute": -113.333, "percent": -48.57},
        # Wall clock: a ran 10 s to its end; b, still active, 4 s to its last event.
        "session_duration_ms": {"absolute": -6000.0, "percent": -60.0},
        "cost_usd": {"absolute": -0.002125, "percent": -85.0},
    }


def test_model_latency_is_per_model_mean_call_duration(db):
    seed(db)
    assert compare_sessions(db, "a", "b")["model_latency"] == {
        # Only b called claude: no delta.
        "claude": {"a_avg_ms": None, "b_avg_ms": 250.0, "absolute": None, "percent": None},
        # a: (200 + 400) / 2 = 300 ms; b: 150 ms.
        "gpt-4o": {"a_avg_ms": 300.0, "b_avg_ms": 150.0, "absolute": -150.0, "percent": -50.0},
    }


def test_a_call_without_duration_leaves_the_model_latency_unknown(db):
    ingest_events(db, [
        event("x", model="m", tokens_in=1, tokens_out=1, timestamp="2026-03-01T10:00:01Z"),
        event("y", model="m", tokens_in=1, tokens_out=1, duration_ms=80, timestamp="2026-03-01T10:00:01Z"),
    ])
    result = compare_sessions(db, "x", "y")
    assert result["session_a"]["models"]["m"]["avg_duration_ms"] is None
    assert result["model_latency"]["m"] == {"a_avg_ms": None, "b_avg_ms": 80.0, "absolute": None,
                                            "percent": None}


def test_shared_lists_keys_present_in_both(db):
    seed(db)
    assert compare_sessions(db, "a", "b")["shared"] == {
        "event_types": ["llm_call", "session_start", "tool_call"],
        "tools": ["search"],
        "models": ["gpt-4o"],
    }


def test_swapping_the_baseline_flips_the_sign(db):
    seed(db)
    deltas = compare_sessions(db, "b", "a")["deltas"]
    assert deltas["total_tokens"] == {"absolute": 300, "percent": 120.0}
    assert deltas["error_count"] == {"absolute": -1, "percent": -100.0}


def test_a_session_compared_with_itself_has_zero_deltas(db):
    seed(db)
    result = compare_sessions(db, "a", "a")
    assert all(d["absolute"] == 0 for d in result["deltas"].values())
    assert result["deltas"]["error_count"]["percent"] is None
    assert result["shared"]["models"] == ["gpt-4o"]


def test_delta_helper():
    assert delta(0, 0) == {"absolute": 0, "percent": None}
    assert delta(None, 3) == {"absolute": None, "percent": None}
    assert delta(3, 4) == {"absolute": 1, "percent": 33.33}
    assert delta(0.1, 0.3) == {"absolute": 0.2, "percent": 200.0}


def test_api_compare_matches_service(db, client):
    seed(db)
    response = client.post("/sessions/compare", json={"session_a": "a", "session_b": "b"})
    assert response.status_code == 200
    body = response.get_json()
    assert body["compared_at"].endswith("Z")
    assert without_time(body) == without_time(compare_sessions(db, "a", "b"))


@pytest.mark.parametrize("body, message", [
    ({"session_a": "a"}, "session_b is required"),
    ({"session_b": "b"}, "session_a is required"),
    ({"session_a": 1, "session_b": "b"}, "session_a must be a non-empty string"),
    ({"session_a": "a", "session_b": ""}, "session_b must be a non-empty string"),
    ([1, 2], "request body must be a JSON object"),
])
def test_api_compare_bad_body_is_400(db, client, body, message):
    seed(db)
    response = client.post("/sessions/compare", json=body)
    assert response.status_code == 400
    assert message in response.get_json()["error"]


def test_api_compare_malformed_json_is_400(db, client):
    response = client.post("/sessions/compare", data=b"{not json", content_type="application/json")
    assert response.status_code == 400
    assert "malformed JSON" in response.get_json()["error"]


def test_api_compare_unknown_session_is_404(db, client):
    seed(db)
    response = client.post("/sessions/compare", json={"session_a": "a", "session_b": "zzz"})
    assert response.status_code == 404
    assert response.get_json() == {"error": "session 'zzz' not found"}


def test_compare_is_a_fixed_route_not_a_session_id(db, client):
    ingest_events(db, [event("compare", agent_name="x")])
    assert client.get("/sessions/compare").get_json()["session_id"] == "compare"
    assert client.post("/sessions/compare", json={"session_a": "compare", "session_b": "compare"}
                       ).status_code == 200


def test_cli_json_equals_api_body(db, cli, client):
    seed(db)
    result = cli("compare", "a", "b", "--json")
    assert result.exit_code == 0
    api = client.post("/sessions/compare", json={"session_a": "a", "session_b": "b"}).get_json()
    assert without_time(json.loads(result.stdout)) == without_time(api)


def test_cli_piped_output_is_tab_separated(db, cli):
    seed(db)
    lines = cli("compare", "a", "b").stdout.splitlines()
    assert lines[0] == "metric\ta\tb\tdelta\tpercent"
    assert lines[1] == "total_tokens\t550\t250\t-300\t-54.55"
    assert lines[4] == "tokens_cache_read\t0\t0\t0\t-"
    assert lines[8] == "error_count\t0\t1\t1\t-"  # no percent of a zero baseline


def test_cli_unknown_session_is_one_line_error(db, cli):
    seed(db)
    result = cli("compare", "a", "nope")
    assert result.exit_code == 1
    assert result.stderr == "Error: session 'nope' not found\n"
