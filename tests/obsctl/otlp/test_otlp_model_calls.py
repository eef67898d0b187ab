"""A model call is counted once: the preparation steps and wrapper spans that instrumentations
mark as model calls are stored as steps. Asserted from the recorded LlamaIndex export, plus a
wrapper whose call was stored by an earlier request."""

from __future__ import annotations

import orjson

from obsctl.services.otlp import ingest_otlp
from obsctl.services.sessions import get_session
from tests.otlp_recordings import replay, session_events
from tests.otlp_support import T0, request, span


def test_llama_index_model_calls_are_the_calls_made(client):
    assert [status for _, status, _ in replay(client, "llama-index")] == [200, 200]
    session, by_type = session_events(client, "capture-llama-index-session-1")
    calls = [e["metadata"]["span_name"] for e in by_type["llm_call"]]
    # Four chat completions and the retriever's query embedding (inside its wrapper span); the
    # failed fifth chat call is the run's error.
    assert calls == ["OpenAI.astream_chat", "OpenAI.astream_chat", "OpenAIEmbedding._get_query_embedding",
                     "OpenAI.astream_chat", "OpenAI.astream_chat"]
    steps = [e["metadata"]["span_name"] for e in by_type["generic"]]
    assert steps.count("OpenAI._prepare_chat_with_tools") == 5
    assert "OpenAIEmbedding.get_query_embedding" in steps
    assert [e["metadata"]["span_name"] for e in by_type["error"]] == ["OpenAI.astream_chat"]
    assert (session["total_tokens_in"], session["total_tokens_out"]) == (550, 110)


def test_a_wrapper_exported_after_its_call_is_a_step(store):
    call = span("53995c3f42cd8ad8", parent="00f067aa0ba902b7", name="chat gpt-4o",
                attrs={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                       "gen_ai.usage.input_tokens": 10, "session.id": "s-wrap"}, start=T0 + 1_000_000)
    wrapper = span("00f067aa0ba902b7", name="chat", duration_ms=30,
                   attrs={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                          "session.id": "s-wrap"})
    ingest_otlp(store, orjson.dumps(request(call)), "json")
    ingest_otlp(store, orjson.dumps(request(wrapper)), "json")
    types = {e["metadata"]["span_name"]: e["event_type"] for e in get_session(store, "s-wrap")["events"]}
    assert types == {"chat gpt-4o": "llm_call", "chat": "generic"}


def test_one_anthropic_call_recorded_by_two_instrumentations_counts_once(client):
    """OpenLLMetry's anthropic.chat and the Anthropic SDK's own anthropic.messages.create are
    sibling spans of one call; OpenInference's LLM span wraps the SDK's."""
    assert [status for _, status, _ in replay(client, "anthropic-openllmetry")] == [200]
    session, by_type = session_events(client, "capture-anthropic-session-1")
    assert [e["metadata"]["span_name"] for e in by_type["llm_call"]] == ["anthropic.chat"] * 3
    assert [e["tokens_in"] for e in by_type["llm_call"]] == [1100, 1150, 1150]
    inner = [e for e in by_type["generic"] if e["metadata"]["span_name"] == "anthropic.messages.create"]
    assert len(inner) == 4 and all(e["metadata"]["same_call_as"] for e in inner)
    assert inner[0]["metadata"]["uncounted_usage"] == {"tokens_in": 1100, "tokens_out": 20,
                                                          "tokens_cache_write": 1000}
    assert session["total_tokens_in"] == 3400
    # The call that failed (a 500) is one error, not two.
    assert session["error_count"] == 1
    assert inner[-1]["output_data"]["same_call_error"]


def test_openinference_llm_span_around_the_sdk_span_counts_once(client):
    assert [status for _, status, _ in replay(client, "anthropic")] == [200]
    session, by_type = session_events(client, "capture-anthropic-session-1")
    assert [e["metadata"]["span_name"] for e in by_type["llm_call"]] == ["anthropic.messages.create"] * 3
    assert session["total_tokens_in"] == 3400
    assert session["error_count"] == 1
