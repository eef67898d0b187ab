"""What the Vercel AI SDK 6 (with the OpenTelemetry Node SDK) and the OpenAI Agents SDK (with
OpenInference) really send, replayed byte for byte from tests/data/otlp/, and what obsctl makes of
it: sessions, agent names, model calls, tokens, tool names and arguments, failures."""

from __future__ import annotations

from tests.otlp_recordings import replay, session_events


def test_vercel_ai_sdk_generate_text_with_tools(client):
    assert [status for _, status, _ in replay(client, "vercel-ai")] == [200]
    # sessionId telemetry metadata groups both runs into one session (not one per trace).
    assert [s["session_id"] for s in client.get("/sessions").get_json()["sessions"]] == [
        "capture-vercel-ai-session-1"]
    session, by_type = session_events(client, "capture-vercel-ai-session-1")
    assert session["agent_name"] == "support-agent"  # ai.telemetry.functionId of the run

    runs = [e for e in session["events"] if e.get("parent_id") is None]
    assert [(e["event_type"], e["agent_name"]) for e in runs] == [("agent_run", "support-agent"),
                                                                  ("agent_run", "support-agent")]
    # The second run failed because its model call did: one failure, counted on the call.
    assert runs[1]["output_data"]["child_error"].startswith("The server had an error")
    assert not runs[1]["is_error"]
    assert runs[0]["input_data"]["prompt"].startswith("Weather in Paris")
    assert runs[0]["output_data"] == {"text": "Paris is sunny, 21 C; order A-1 could not be looked up."}

    calls = by_type["llm_call"]
    assert [(c["model"], c["tokens_in"], c["tokens_out"]) for c in calls] == [
        ("gpt-4o-mini-2024-07-18", 100, 20), ("gpt-4o-mini-2024-07-18", 150, 30),
        ("gpt-4o-mini-2024-07-18", 150, 30)]
    assert [m["role"] for m in calls[0]["input_data"]["messages"]] == ["system", "user"]
    assert calls[0]["output_data"]["tool_calls"][0]["toolName"] == "get_weather"
    # The run's own usage (the sum of its calls) is not counted a second time.
    assert (session["total_tokens_in"], session["total_tokens_out"]) == (400, 80)

    assert [(e["tool_call"]["name"], e["tool_call"]["input"]) for e in by_type["tool_call"]] == [
        ("get_weather", {"city": "Paris"})]
    assert by_type["tool_call"][0]["tool_call"]["output"] == {"city": "Paris", "forecast": "sunny", "celsius": 21}
    failed_tool = by_type["tool_error"][0]
    assert failed_tool["tool_call"] == {"name": "lookup_order", "input": {"order_id": "A-1"},
                                        "id": "call_fb6613c924d201"}
    assert failed_tool["output_data"]["error"] == "order service unavailable for A-1"
    [failed_call] = by_type["error"]
    assert failed_call["output_data"]["error"].startswith("The server had an error")
    assert failed_call["model"] == "gpt-4o-mini"
    # The tool error and the failed call: two failures, each counted once.
    assert session["error_count"] == 2


def test_openai_agents_sdk_agents_handoffs_and_tools(client):
    assert [status for _, status, _ in replay(client, "openai-agents")] == [200]
    session, by_type = session_events(client, "capture-openai-agents-session-1")
    # OpenInference's agent.name names each agent span.
    agents = {e["agent_name"] for e in by_type["decision"] + by_type["error"]
              if e["metadata"]["attributes"].get("openinference.span.kind") == "AGENT"}
    assert agents == {"Planner", "Triage"}

    tools = {e["tool_call"]["name"]: e for e in by_type["tool_call"] + by_type["tool_error"]}
    # The arguments come from input.value; tool.parameters (the schema) stays in the metadata.
    assert tools["get_weather"]["tool_call"]["input"] == {"city": "Paris"}
    assert tools["get_weather"]["tool_call"]["output"] == "Paris: sunny, 21 C"
    assert "properties" in tools["get_weather"]["metadata"]["attributes"]["tool.parameters"]
    assert tools["lookup_order"]["event_type"] == "tool_error"
    assert tools["lookup_order"]["tool_call"]["input"] == {"order_id": "A-1"}
    assert tools["handoff to Triage"]["tool_call"]["input"] == "Planner"

    assert [(c["tokens_in"], c["tokens_out"]) for c in by_type["llm_call"]] == [
        (100, 20), (150, 30), (150, 30), (150, 30)]
    assert (session["total_tokens_in"], session["total_tokens_out"]) == (550, 110)


def _messages_per_call(client, session_id: str) -> list[tuple[list, list]]:
    calls = []
    for event in client.get(f"/sessions/{session_id}").get_json()["events"]:
        if event["event_type"] == "llm_call" and event.get("input_data"):
            calls.append((event["input_data"]["messages"], event["output_data"]["messages"]))
    return calls


def test_content_on_the_span_and_on_its_event_is_stored_once(client):
    """opentelemetry-instrumentation-openai-v2 in SPAN_AND_EVENT mode puts the messages on the
    span and on a gen_ai.client.inference.operation.details log record: one copy is kept."""
    assert [status for _, status, _ in replay(client, "openai-v2/span_and_event")] == [200, 200]
    seen = _messages_per_call(client, "capture-openai-v2-conversation-span_and_event")
    # The tool loop: system + user, then + the tool call and its result, twice; one answer each.
    assert [(len(i), len(o)) for i, o in seen] == [(2, 1), (4, 1), (6, 1)]
    assert [m["role"] for m in seen[2][0]] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert seen[2][1][0]["parts"][0]["content"] == "Paris is sunny, 21 C; order A-1 could not be looked up."
