"""OpenInference's flattened messages (`llm.input_messages.<n>.message.*`) read into messages,
from the recorded exports of the Anthropic SDK and LlamaIndex with OpenInference."""

from __future__ import annotations

from tests.otlp_recordings import replay, session_events


def test_anthropic_flattened_messages_become_the_conversation(client):
    assert [status for _, status, _ in replay(client, "anthropic")] == [200]
    session, by_type = session_events(client, "capture-anthropic-session-1")
    spans = [e for e in by_type["generic"] if e["metadata"]["span_name"] == "messages.create"]
    first, second = spans[0], spans[1]
    assert [m["role"] for m in first["input_data"]["messages"]] == ["system", "user"]
    assert first["input_data"]["messages"][0]["contents"][0]["text"].startswith("You are the support agent")
    assert first["input_data"]["messages"][1]["content"].startswith("Weather in Paris")
    [call] = first["output_data"]["messages"][0]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    # The second call sees the tool's answer, linked to its call.
    tool = second["input_data"]["messages"][3]
    assert (tool["role"], tool["tool_call_id"]) == ("tool", call["id"])
    # What was read into messages is not repeated in the metadata.
    assert not any(k.startswith("llm.input_messages.") for k in first["metadata"]["attributes"])


def test_llama_index_call_messages(client):
    assert [status for _, status, _ in replay(client, "llama-index")] == [200, 200]
    _, by_type = session_events(client, "capture-llama-index-session-1")
    call = by_type["llm_call"][0]
    assert [m["role"] for m in call["input_data"]["messages"]] == ["system", "user"]
    assert call["output_data"]["messages"][0]["role"] == "assistant"
