"""What Pydantic AI's built-in OpenTelemetry instrumentation really sends (recorded under
tests/data/otlp/pydantic-ai/), and what obsctl makes of it."""

from __future__ import annotations

from tests.otlp_recordings import replay, session_events


def test_pydantic_ai_runs_of_one_conversation(client):
    assert [status for _, status, _ in replay(client, "pydantic-ai")] == [200]
    session, by_type = session_events(client, "capture-pydantic-ai-conversation-1")
    assert session["agent_name"] == "weather_agent"
    runs = [e for e in session["events"] if e.get("parent_id") is None]
    assert len(runs) == 3 and {e["agent_name"] for e in runs} == {"weather_agent"}
    # The run's final output is its output.
    assert runs[0]["output_data"] == {"text": "Paris is sunny, 21 C; order A-1 could not be looked up."}
    # Four model calls (one failed with a 500), usage counted on the calls, not again on the runs.
    assert [(e["tokens_in"], e["tokens_out"]) for e in by_type["llm_call"]] == [
        (100, 20), (150, 30), (150, 30), (100, 20)]
    assert (session["total_tokens_in"], session["total_tokens_out"]) == (500, 100)
    tools = [(e["event_type"], e["tool_call"]["name"], e["tool_call"].get("input")) for e in
             by_type["tool_call"] + by_type["tool_error"]]
    assert ("tool_call", "get_weather", {"city": "Paris"}) in tools
    assert ("tool_error", "explode", {"reason": "test"}) in tools
    # Three failures (ModelRetry of lookup_order, the 500, explode), each counted once.
    assert session["error_count"] == 3
