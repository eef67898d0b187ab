"""Span-to-event mapping (spec OTLP.md) through the OTLP ingest service, on a real SQLite file."""

import orjson
import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.otlp import ingest_otlp
from obsctl.services.sessions import get_session, list_sessions
from tests.otlp_support import MS, OTHER_TRACE, T0, T0_ISO, TRACE, request, span


def ingest(db, *spans, **kwargs):
    return ingest_otlp(db, orjson.dumps(request(*spans, **kwargs)), "json")


def only_event(db, session_id):
    events = get_session(db, session_id)["events"]
    assert len(events) == 1
    return events[0]


def test_llm_span_with_current_genai_names(db):
    ingest(db, span("00f067aa0ba902b7", name="chat gpt-4o", duration_ms=1250, kind=3, attrs={
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.usage.input_tokens": 321,
        "gen_ai.usage.output_tokens": 54,
    }))
    event = only_event(db, TRACE)
    assert event["event_id"] == f"{TRACE}:00f067aa0ba902b7"
    assert event["event_type"] == "llm_call"
    assert event["timestamp"] == T0_ISO
    assert event["duration_ms"] == 1250
    assert event["model"] == "gpt-4o-2024-08-06"
    assert (event["tokens_in"], event["tokens_out"]) == (321, 54)
    assert event["agent_name"] == "test-service"
    assert event["parent_id"] is None
    assert event["is_error"] is False


def test_deprecated_genai_token_names(db):
    ingest(db, span("00f067aa0ba902b7", attrs={
        "gen_ai.request.model": "gpt-4", "gen_ai.usage.prompt_tokens": 11,
        "gen_ai.usage.completion_tokens": 22}))
    event = only_event(db, TRACE)
    assert (event["event_type"], event["model"], event["tokens_in"], event["tokens_out"]) == (
        "llm_call", "gpt-4", 11, 22)


def test_openinference_llm_span(db):
    ingest(db, span("00f067aa0ba902b7", attrs={
        "openinference.span.kind": "LLM",
        "llm.model_name": "claude-sonnet-4",
        "llm.token_count.prompt": 1000,
        "llm.token_count.completion": 200,
        "session.id": "ticket-981",
        "input.value": '{"question": "where is my order?"}',
        "output.value": "It ships tomorrow.",
    }))
    event = only_event(db, "ticket-981")
    assert (event["event_type"], event["model"], event["tokens_in"], event["tokens_out"]) == (
        "llm_call", "claude-sonnet-4", 1000, 200)
    assert event["input_data"] == {"question": "where is my order?"}
    assert event["output_data"] == {"value": "It ships tomorrow."}


def test_openllmetry_flattened_messages_and_session_property(db):
    ingest(db, span("00f067aa0ba902b7", attrs={
        "traceloop.association.properties.session_id": "chat-7",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "Be brief.",
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "Hi",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "Hello!",
    }))
    event = only_event(db, "chat-7")
    assert event["event_type"] == "llm_call"
    assert event["input_data"] == {"messages": [{"role": "system", "content": "Be brief."},
                                                {"role": "user", "content": "Hi"}]}
    assert event["output_data"] == {"messages": [{"role": "assistant", "content": "Hello!"}]}
    assert "gen_ai.prompt.0.role" not in event["metadata"]["attributes"]


@pytest.mark.parametrize("key", [
    "session.id", "gen_ai.conversation.id", "langfuse.session.id",
    "traceloop.association.properties.session_id", "lmnr.association.properties.session_id",
    "mlflow.trace.session", "session_id", "thread_id", "conversation_id",
])
def test_session_id_attribute_names(db, key):
    ingest(db, span("00f067aa0ba902b7", attrs={key: "s-42"}))
    assert only_event(db, "s-42")["session_id"] == "s-42"


def test_session_id_order_of_precedence(db):
    ingest(db, span("00f067aa0ba902b7", attrs={"gen_ai.conversation.id": "second",
                                              "session.id": "first"}))
    assert [s["session_id"] for s in list_sessions(db)["sessions"]] == ["first"]


def test_session_id_from_resource_and_integer_thread_id(db):
    ingest(db, span("00f067aa0ba902b7"), resource={"service.name": "svc", "session.id": "res-1"})
    ingest(db, span("00f067aa0ba902b8", trace=OTHER_TRACE, attrs={"thread_id": 77}))
    assert only_event(db, "res-1")["agent_name"] == "svc"
    assert only_event(db, "77")["session_id"] == "77"


@pytest.mark.parametrize("attrs, expected", [
    ({"gen_ai.operation.name": "chat"}, "llm_call"),
    ({"gen_ai.operation.name": "text_completion"}, "llm_call"),
    ({"gen_ai.operation.name": "generate_content"}, "llm_call"),
    ({"gen_ai.operation.name": "embeddings"}, "llm_call"),
    ({"openinference.span.kind": "EMBEDDING"}, "llm_call"),
    ({"gen_ai.request.model": "m"}, "llm_call"),
    ({"gen_ai.operation.name": "execute_tool", "gen_ai.request.model": "m"}, "tool_call"),
    ({"openinference.span.kind": "TOOL"}, "tool_call"),
    ({"traceloop.span.kind": "tool"}, "tool_call"),
    ({"gen_ai.operation.name": "invoke_agent"}, "decision"),
    ({"gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "m"}, "decision"),
    ({"gen_ai.operation.name": "create_agent"}, "decision"),
    ({"gen_ai.operation.name": "invoke_workflow"}, "decision"),
    ({"openinference.span.kind": "AGENT"}, "decision"),
    ({"openinference.span.kind": "CHAIN"}, "decision"),
    ({"traceloop.span.kind": "workflow"}, "decision"),
    ({"http.method": "GET"}, "generic"),
])
def test_event_type(db, attrs, expected):
    # Under a parent span: a root agent span is the run itself (the next test).
    ingest(db, span("00f067aa0ba902b7", parent="b7ad6b7169203331", attrs=attrs))
    assert only_event(db, TRACE)["event_type"] == expected


@pytest.mark.parametrize("attrs, agent", [
    ({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}, "planner"),
    ({"openinference.span.kind": "AGENT"}, "Trip agent"),
    ({"traceloop.span.kind": "workflow", "traceloop.entity.name": "support"}, "support"),
    ({"openinference.span.kind": "CHAIN"}, "test-service"),
])
def test_root_agent_span_is_the_run_and_names_the_session_agent(db, attrs, agent):
    ingest(db, span("00f067aa0ba902b7", name="Trip agent", attrs=attrs))
    event = only_event(db, TRACE)
    assert event["event_type"] == "agent_run" and event["parent_id"] is None
    assert get_session(db, TRACE)["agent_name"] == agent


def test_error_status_replaces_the_type(db):
    ingest(db, span("00f067aa0ba902b7", attrs={"gen_ai.operation.name": "chat"},
                    status={"code": 2, "message": "rate limited by provider"}))
    event = only_event(db, TRACE)
    assert event["event_type"] == "error"
    assert event["output_data"] == {"error": "rate limited by provider"}
    assert event["is_error"] is True
    assert get_session(db, TRACE)["error_count"] == 1


def test_exception_event_on_a_tool_span_is_a_tool_error(db):
    ingest(db, span("00f067aa0ba902b7", attrs={"gen_ai.operation.name": "execute_tool",
                                              "gen_ai.tool.name": "search"},
                    events=[{"name": "exception", "attributes": {
                        "exception.type": "TimeoutError", "exception.message": "search timed out",
                        "exception.stacktrace": "Traceback ..."}}]))
    event = only_event(db, TRACE)
    assert event["event_type"] == "tool_error"
    assert event["output_data"] == {"error": "TimeoutError: search timed out",
                                    "exception_type": "TimeoutError", "stacktrace": "Traceback ..."}
    assert event["tool_call"] == {"name": "search"}


def test_error_type_attribute_marks_an_error(db):
    ingest(db, span("00f067aa0ba902b7", attrs={"error.type": "timeout"}))
    event = only_event(db, TRACE)
    assert (event["event_type"], event["output_data"]) == ("error", {"error": "timeout"})


def test_ok_status_is_not_an_error(db):
    ingest(db, span("00f067aa0ba902b7", status={"code": 1}))
    assert only_event(db, TRACE)["is_error"] is False


def test_tool_call_fields(db):
    ingest(db, span("00f067aa0ba902b7", attrs={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": '{"city": "Paris"}',
        "gen_ai.tool.call.result": '{"temp_c": 21}'}))
    event = only_event(db, TRACE)
    assert event["tool_call"] == {"name": "get_weather", "input": {"city": "Paris"},
                                  "output": {"temp_c": 21}, "id": "call_1"}


def test_openinference_and_traceloop_tool_spans(db):
    ingest(db,
           span("00f067aa0ba902b7", attrs={"openinference.span.kind": "TOOL", "tool.name": "lookup",
                                           "tool.parameters": '{"type": "object"}', "input.value": '{"id": 3}',
                                           "output.value": "found"}),
           span("00f067aa0ba902b8", trace=OTHER_TRACE, attrs={
               "traceloop.span.kind": "tool", "traceloop.entity.name": "calc",
               "traceloop.entity.input": '{"x": 1}', "traceloop.entity.output": "2"}))
    assert only_event(db, TRACE)["tool_call"] == {"name": "lookup", "input": {"id": 3}, "output": "found"}
    # OpenInference's tool.parameters is the tool's schema: kept with the span, never the arguments.
    assert only_event(db, TRACE)["metadata"]["attributes"]["tool.parameters"] == '{"type": "object"}'
    assert only_event(db, OTHER_TRACE)["tool_call"] == {"name": "calc", "input": {"x": 1}, "output": "2"}


def test_genai_messages_system_instructions_and_reasoning(db):
    output = [{"role": "assistant", "parts": [
        {"type": "reasoning", "content": "The user wants a number."},
        {"type": "text", "content": "42"}]}]
    ingest(db, span("00f067aa0ba902b7", attrs={
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", "content": "?"}]}]',
        "gen_ai.system_instructions": '[{"type": "text", "content": "Answer."}]',
        "gen_ai.output.messages": orjson.dumps(output).decode()}))
    event = only_event(db, TRACE)
    assert event["input_data"] == {
        "messages": [{"role": "user", "parts": [{"type": "text", "content": "?"}]}],
        "system_instructions": [{"type": "text", "content": "Answer."}]}
    assert event["output_data"] == {"messages": output}
    assert event["decision_trace"] == {"reasoning": "The user wants a number."}


def test_event_metadata_and_parent(db):
    ingest(db, span("00f067aa0ba902b7", parent="53995c3f42cd8ad8", name="chat", kind=3,
                    attrs={"gen_ai.operation.name": "chat", "gen_ai.input.messages": "[]",
                           "server.address": "api.openai.com"}), scope="my.instrumentation")
    event = only_event(db, TRACE)
    assert event["parent_id"] == f"{TRACE}:53995c3f42cd8ad8"
    assert event["metadata"] == {
        "span_name": "chat", "trace_id": TRACE, "span_id": "00f067aa0ba902b7",
        "parent_span_id": "53995c3f42cd8ad8", "span_kind": "client", "scope": "my.instrumentation",
        "attributes": {"gen_ai.operation.name": "chat", "server.address": "api.openai.com"},
    }


def test_session_metadata_is_the_resource(db):
    ingest(db, span("00f067aa0ba902b7"),
           resource={"service.name": "svc", "deployment.environment": "prod", "host.cores": 8})
    assert get_session(db, TRACE)["metadata"] == {
        "service.name": "svc", "deployment.environment": "prod", "host.cores": 8}


def test_session_id_applies_to_every_span_of_the_trace_in_the_request(db):
    result = ingest(
        db,
        span("00000000000000c1", parent="00000000000000a1", attrs={"gen_ai.request.model": "m",
                                                                   "gen_ai.usage.input_tokens": 5}),
        span("00000000000000a1", attrs={"gen_ai.conversation.id": "conv-1"}),
        span("00000000000000b1", trace=OTHER_TRACE),
    )
    assert (result.stored, result.sessions) == (3, {"conv-1", OTHER_TRACE})
    session = get_session(db, "conv-1")
    assert [e["event_id"][-2:] for e in session["events"]] == ["c1", "a1"]
    assert (session["event_count"], session["total_tokens_in"]) == (2, 5)


def test_trace_session_link_is_remembered_for_later_spans(db):
    ingest(db, span("00000000000000a1", attrs={"session.id": "conv-1"}))
    ingest(db, span("00000000000000c1", parent="00000000000000a1"))
    assert get_session(db, "conv-1")["event_count"] == 2
    assert list_sessions(db)["total"] == 1


def test_spans_stored_before_the_session_was_known_move_into_it(db):
    # Children end (and are exported) first; the root span naming the session comes last.
    ingest(db,
           span("00000000000000c1", parent="00000000000000a1", start=T0 + 5 * MS, attrs={
               "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 7,
               "gen_ai.usage.output_tokens": 3}),
           span("00000000000000c2", parent="00000000000000a1", start=T0 + 20 * MS,
                status={"code": 2, "message": "boom"}))
    assert get_session(db, TRACE)["event_count"] == 2
    result = ingest(db, span("00000000000000a1", duration_ms=50, attrs={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner",
        "gen_ai.conversation.id": "conv-9"}))
    assert result.moved == 2
    session = get_session(db, "conv-9")
    assert {k: session[k] for k in ("agent_name", "started_at", "event_count", "error_count",
                                    "total_tokens_in", "total_tokens_out")} == {
        "agent_name": "planner", "started_at": T0_ISO, "event_count": 3, "error_count": 1,
        "total_tokens_in": 7, "total_tokens_out": 3}
    assert [e["event_id"][-2:] for e in session["events"]] == ["a1", "c1", "c2"]
    assert [s["session_id"] for s in list_sessions(db)["sessions"]] == ["conv-9"]


def test_agent_name_from_the_agent_span_replaces_the_service_name(db):
    ingest(db,
           span("00000000000000c1", parent="00000000000000a1", start=T0 + MS,
                attrs={"gen_ai.request.model": "m"}),
           span("00000000000000a1", attrs={"traceloop.span.kind": "agent",
                                           "traceloop.entity.name": "researcher"}))
    session = get_session(db, TRACE)
    assert session["agent_name"] == "researcher"
    # The model call under the agent span belongs to that agent.
    assert [e["agent_name"] for e in session["events"]] == ["researcher", "researcher"]


def test_a_span_s_own_agent_name_wins_over_the_agent_above_it(db):
    ingest(db,
           span("00000000000000c2", parent="00000000000000b1", start=T0 + 2 * MS,
                attrs={"gen_ai.request.model": "m"}),
           span("00000000000000b1", parent="00000000000000a1", start=T0 + MS,
                attrs={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"}),
           span("00000000000000c1", parent="00000000000000a1", start=T0 + 3 * MS,
                attrs={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}),
           span("00000000000000a1", attrs={"gen_ai.operation.name": "invoke_agent",
                                           "gen_ai.agent.name": "planner"}))
    session = get_session(db, TRACE)
    assert session["agent_name"] == "planner"  # the root agent's
    names = {e["metadata"]["span_id"]: e["agent_name"] for e in session["events"]}
    assert names == {"00000000000000a1": "planner", "00000000000000b1": "triage",
                     "00000000000000c2": "triage", "00000000000000c1": "planner"}


def test_agent_name_given_by_another_source_is_kept(db):
    ingest_events(db, [{"session_id": "s1", "event_type": "session_start", "agent_name": "billing"}])
    ingest(db, span("00000000000000a1", attrs={"session.id": "s1", "gen_ai.agent.name": "other"}))
    assert get_session(db, "s1")["agent_name"] == "billing"


def test_same_spans_twice_are_stored_once(db):
    spans = [span("00000000000000a1", attrs={"gen_ai.request.model": "m",
                                             "gen_ai.usage.input_tokens": 10}),
             span("00000000000000b1", parent="00000000000000a1")]
    first = ingest(db, *spans)
    second = ingest(db, *spans)
    assert (first.stored, first.duplicates, second.stored, second.duplicates) == (2, 0, 0, 2)
    session = get_session(db, TRACE)
    assert (session["event_count"], session["total_tokens_in"]) == (2, 10)


def test_spans_failing_validation_are_rejected_and_the_rest_stored(db):
    result = ingest(db,
                    span("00000000000000a1", attrs={"gen_ai.usage.input_tokens": -5}),
                    span("00000000000000b1", attrs={"session.id": "x" * 129}),
                    span("00000000000000c1"))
    assert result.stored == 1
    assert result.rejected == [
        (f"{TRACE}:00000000000000a1", "tokens_in must be a non-negative integer, got -5"),
        (f"{TRACE}:00000000000000b1", "session_id must be at most 128 characters (got 129)"),
    ]
    assert result.error_message().startswith(
        f"2 spans rejected: {TRACE}:00000000000000a1: tokens_in must be")


def test_unusable_ids_and_times_are_rejected(db):
    bad_parent = span("00000000000000d1", parent="abc")
    no_start = span("00000000000000e1")
    no_start["startTimeUnixNano"] = "0"
    result = ingest(db, span("00000000000000a1", trace="0" * 32), span("xyz"), bad_parent,
                    no_start, span("00000000000000f1"))
    assert result.stored == 1
    assert [why for _, why in result.rejected] == [
        "traceId must be 32 hex digits, not all zero",
        "spanId must be 16 hex digits, not all zero",
        "parentSpanId must be 16 hex digits",
        "startTimeUnixNano is missing",
    ]
    assert result.rejected[0][0] == "resourceSpans[0].scopeSpans[0].spans[0]"
    assert result.rejected[2][0] == f"{TRACE}:00000000000000d1"


def test_json_id_forms_and_missing_end_time(db):
    import base64

    root_b64 = span(base64.b64encode(bytes.fromhex("00000000000000a1")).decode(),
                    trace=base64.b64encode(bytes.fromhex(TRACE)).decode(), parent="0" * 16)
    no_end = span("00000000000000b1", parent="00000000000000a1")
    del no_end["endTimeUnixNano"]
    result = ingest(db, root_b64, no_end)
    assert (result.stored, result.rejected) == (2, [])
    events = get_session(db, TRACE)["events"]
    assert [(e["event_id"], e["parent_id"], e["duration_ms"]) for e in events] == [
        (f"{TRACE}:00000000000000a1", None, 10),
        (f"{TRACE}:00000000000000b1", f"{TRACE}:00000000000000a1", None),
    ]


def test_odd_attribute_values(db):
    s = span("00000000000000a1", attrs={"gen_ai.request.model": "m"})
    s["attributes"] += [
        {"key": "huge", "value": {"intValue": str(2**70)}},
        {"key": "nan", "value": {"doubleValue": "NaN"}},
        {"key": "float_tokens", "value": {"doubleValue": 3.0}},
        {"key": "gen_ai.usage.output_tokens", "value": {"doubleValue": 3.0}},
        {"key": "no_value"},
        {"key": "bytes", "value": {"bytesValue": "AQI="}},
        {"key": "kv", "value": {"kvlistValue": {"values": [{"key": "a", "value": {"boolValue": True}}]}}},
    ]
    result = ingest(db, s)
    assert result.rejected == []
    event = only_event(db, TRACE)
    assert event["tokens_out"] == 3
    attrs = event["metadata"]["attributes"]
    assert (attrs["huge"], attrs["nan"], attrs["no_value"], attrs["bytes"], attrs["kv"]) == (
        None, None, None, "AQI=", {"a": True})


def test_timestamps_keep_milliseconds(db):
    ingest(db, span("00000000000000a1", start=T0 + 123_456_789))
    assert only_event(db, TRACE)["timestamp"] == "2025-11-21T10:02:19.123Z"
