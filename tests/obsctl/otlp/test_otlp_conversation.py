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
