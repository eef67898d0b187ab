"""explain shows a model call's messages as a conversation (system, user, assistant, tool, then
the reply), whatever convention the framework recorded them in: asserted on the recorded exports
of the OpenAI SDK (GenAI parts), LangChain (its serialisation), the Anthropic SDK
(OpenInference's flattened messages) and the Vercel AI SDK."""

from __future__ import annotations

import pytest

from tests.otlp_recordings import replay

SECOND_CALL = [
    "     - **system:** Answer with the tools.",
    '     - **assistant:** → get_weather({"city":"Paris"})',
    "     - **tool:** ← Paris: sunny, 21 C",
    '     - **reply:** → lookup_order({"order_id":"A-1"})',
]


def explanation(client, recording: str, session_id: str) -> str:
    assert all(status == 200 for _, status, _ in replay(client, recording))
    response = client.get(f"/sessions/{session_id}/explain")
    assert response.status_code == 200
    return response.get_json()["explanation"]


def test_genai_parts_read_as_a_conversation(client):
    text = explanation(client, "openai-v2/span_and_event", "capture-openai-v2-conversation-span_and_event")
    assert text.count("   - Conversation:") == 4  # three calls and the failed one
    for line in SECOND_CALL:
        assert line in text
    assert "     - **tool:** ← error: order service unavailable for A-1" in text
    assert "     - **reply:** Paris is sunny, 21 C; order A-1 could not be looked up." in text
    assert "     - **user:** And tomorrow? \\[\\[fail\\]\\]" in text


@pytest.mark.parametrize(("recording", "session_id", "tool_call", "tool_result"), [
    ("langchain", "capture-langchain-thread-1", '→ get_weather({"city": "Paris"})', "Paris: sunny, 21 C"),
    ("anthropic", "capture-anthropic-session-1", '→ get_weather({"city": "Paris"})',
     '{"city": "Paris", "forecast": "sunny", "celsius": 21}'),
    ("vercel-ai", "capture-vercel-ai-session-1", '→ get_weather({"city":"Paris"})',
     '{"city":"Paris","forecast":"sunny","celsius":21}'),
])
def test_each_framework_s_messages_read_as_a_conversation(client, recording, session_id, tool_call, tool_result):
    text = explanation(client, recording, session_id)
    assert f"     - **reply:** {tool_call}" in text
    assert f"     - **assistant:** {tool_call}" in text
    assert any(line.startswith("     - **tool:** ") and tool_result in line for line in text.splitlines())
    assert "     - **reply:** Paris is sunny, 21 C; order A-1 could not be looked up." in text
    # No raw message JSON where a conversation is shown.
    assert '"role"' not in text


# recording -> its session; each ran the same scenario (tests/data/otlp/capture_kit).
SAME_SCENARIO = {
    "langchain": "capture-langchain-thread-1",
    "openai-agents": "capture-openai-agents-session-1",
    "pydantic-ai": "capture-pydantic-ai-conversation-1",
    "vercel-ai": "capture-vercel-ai-session-1",
    "langfuse-v3": "capture-langfuse-v3-session-1",
    "traceloop": "capture-traceloop-session-1",
    "llama-index": "capture-llama-index-session-1",
    "openai-v2/span_and_event": "capture-openai-v2-conversation-span_and_event",
}


@pytest.mark.parametrize("recording", sorted(SAME_SCENARIO))
def test_the_json_export_gives_every_frameworks_messages_in_one_shape(client, recording):
    """The second model call of the scenario was sent the user's question and the weather tool's
    call and result, and asked for lookup_order: `messages` says so in the same shape whatever
    convention the framework recorded it in."""
    import json

    assert all(status == 200 for _, status, _ in replay(client, recording))
    exported = json.loads(client.get(f"/sessions/{SAME_SCENARIO[recording]}/export?format=json").data)
    calls = [e for e in exported["events"] if e["event_type"] == "llm_call" and e["messages"]]
    # The call that was sent the weather tool's result, and answered by asking for the next tool.
    second = next(e["messages"] for e in calls
                  if any(m["role"] == "tool" and "sunny" in (m["content"] or "") for m in e["messages"][-2:]))
    assert "user" in [m["role"] for m in second]
    asked, answered, next_call = second[-3:]
    assert (asked["role"], answered["role"], next_call["role"]) == ("assistant", "tool", "assistant")
    assert asked["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    assert answered["tool_call_id"]
    assert next_call["tool_calls"][0]["name"] in ("lookup_order", "search_docs")
    assert all(set(m) <= {"role", "content", "tool_calls", "tool_call_id"} for m in second)
