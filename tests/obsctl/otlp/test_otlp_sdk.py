"""End to end: the real, unmodified OpenTelemetry SDK and its OTLP/HTTP protobuf exporter
send traces to a real `obsctl serve` on 127.0.0.1; the result is read back through the API."""

import pytest
import requests
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

pytestmark = pytest.mark.e2e


def span_hex(span) -> str:
    return format(span.get_span_context().span_id, "016x")


def run_agent(provider: TracerProvider, session_attr: str = "gen_ai.conversation.id",
              session_id: str = "conv-e2e") -> dict:
    """An instrumented agent: an agent span around an LLM call, a tool call and a failing step."""
    tracer = provider.get_tracer("tests.agent")
    ids = {}
    with tracer.start_as_current_span("invoke_agent planner") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.agent.name", "planner")
        agent.set_attribute(session_attr, session_id)
        ids["agent"] = span_hex(agent)
        ids["trace"] = format(agent.get_span_context().trace_id, "032x")
        with tracer.start_as_current_span("chat gpt-4o") as llm:
            llm.set_attribute("gen_ai.operation.name", "chat")
            llm.set_attribute("gen_ai.request.model", "gpt-4o")
            llm.set_attribute("gen_ai.response.model", "gpt-4o-2024-08-06")
            llm.set_attribute("gen_ai.usage.input_tokens", 120)
            llm.set_attribute("gen_ai.usage.output_tokens", 30)
            ids["llm"] = span_hex(llm)
        with tracer.start_as_current_span("execute_tool get_weather") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_weather")
            tool.set_attribute("gen_ai.tool.call.arguments", '{"city": "Paris"}')
            tool.set_attribute("gen_ai.tool.call.result", '{"temp_c": 21}')
            ids["tool"] = span_hex(tool)
        try:
            with tracer.start_as_current_span("validate answer") as failing:
                ids["failing"] = span_hex(failing)
                raise ValueError("answer is not valid JSON")
        except ValueError:
            pass
    return ids


def provider_for(exporter, batch: bool = True) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "trip-planner"}))
    processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    return provider


def test_sdk_trace_becomes_a_session(live_server):
    server = live_server()
    provider = provider_for(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces"))
    ids = run_agent(provider)
    assert provider.force_flush(10_000)
    provider.shutdown()

    session = requests.get(f"{server.url}/sessions/conv-e2e", timeout=10).json()
    assert {k: session[k] for k in ("agent_name", "status", "event_count", "error_count",
                                    "total_tokens_in", "total_tokens_out")} == {
        "agent_name": "planner", "status": "active", "event_count": 4, "error_count": 1,
        "total_tokens_in": 120, "total_tokens_out": 30}
    assert session["metadata"]["service.name"] == "trip-planner"
    assert session["metadata"]["telemetry.sdk.language"] == "python"

    events = {e["event_id"].split(":")[1]: e for e in session["events"]}
    trace = ids["trace"]
    assert set(events) == {ids["agent"], ids["llm"], ids["tool"], ids["failing"]}
    agent, llm, tool, failing = (events[ids[k]] for k in ("agent", "llm", "tool", "failing"))
    assert (agent["event_type"], agent["parent_id"], agent["agent_name"]) == ("agent_run", None, "planner")
    assert (llm["event_type"], llm["model"], llm["tokens_in"], llm["tokens_out"]) == (
        "llm_call", "gpt-4o-2024-08-06", 120, 30)
    # The calls under the agent span belong to its agent, not to the service.
    assert {e["agent_name"] for e in (llm, tool, failing)} == {"planner"}
    assert tool["event_type"] == "tool_call"
    assert tool["tool_call"] == {"name": "get_weather", "input": {"city": "Paris"}, "output": {"temp_c": 21}}
    assert failing["event_type"] == "error" and failing["is_error"] is True
    assert failing["output_data"]["error"] == "ValueError: answer is not valid JSON"
    assert failing["output_data"]["exception_type"] == "ValueError"
    for child in (llm, tool, failing):
        assert child["parent_id"] == f"{trace}:{ids['agent']}"
        assert child["metadata"]["trace_id"] == trace
    assert requests.get(f"{server.url}/sessions", timeout=10).json()["total"] == 1


def test_span_by_span_export_ends_in_one_session(live_server):
    # SimpleSpanProcessor sends each span as it ends: the children reach obsctl before the
    # agent span that names the session.
    server = live_server()
    provider = provider_for(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces"), batch=False)
    run_agent(provider, session_attr="session.id", session_id="sess-simple")
    provider.shutdown()
    listing = requests.get(f"{server.url}/sessions", timeout=10).json()
    assert [(s["session_id"], s["event_count"], s["total_tokens_in"], s["agent_name"])
            for s in listing["sessions"]] == [("sess-simple", 4, 120, "planner")]


def test_the_same_spans_exported_twice_are_stored_once(live_server):
    server = live_server()
    memory = InMemorySpanExporter()
    provider = provider_for(memory, batch=False)
    run_agent(provider)
    spans = memory.get_finished_spans()
    exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces")
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    exporter.shutdown()
    session = requests.get(f"{server.url}/sessions/conv-e2e", timeout=10).json()
    assert (session["event_count"], session["total_tokens_in"], len(session["events"])) == (4, 120, 4)


def test_gzip_export_with_api_key(live_server):
    server = live_server({"SERVICE_API_KEY": "s3cret"})
    memory = InMemorySpanExporter()
    run_agent(provider_for(memory, batch=False))
    spans = memory.get_finished_spans()

    refused = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", compression=Compression.Gzip)
    assert refused.export(spans) == SpanExportResult.FAILURE
    accepted = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", compression=Compression.Gzip,
                                headers={"X-API-Key": "s3cret"})
    assert accepted.export(spans) == SpanExportResult.SUCCESS
    session = requests.get(f"{server.url}/sessions/conv-e2e", headers={"X-API-Key": "s3cret"},
                           timeout=10).json()
    assert session["event_count"] == 4
