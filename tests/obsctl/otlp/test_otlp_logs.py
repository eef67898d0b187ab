"""OTLP logs: GenAI events (prompts and completions as log records linked to their span) sent
by the real OpenTelemetry SDK's log exporters (HTTP and gRPC) and as hand-built OTLP JSON and
protobuf, to a real `obsctl serve` on 127.0.0.1, on both stores."""

import gzip

import grpc
import pytest
import requests
from google.protobuf.json_format import ParseDict
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import free_port
from tests.otlp_support import MS, T0, TRACE, attributes, request, span, to_protobuf

pytestmark = pytest.mark.e2e

RESOURCE = Resource.create({"service.name": "trip-planner"})
SYSTEM = {"content": "You plan trips. Answer in one line."}
USER = {"content": "Weather in Lisbon tomorrow?"}
CHOICE = {"index": 0, "finish_reason": "stop", "message": {"content": "Sunny, 24 C."}}
EXPECTED_INPUT = {"messages": [{"content": SYSTEM["content"], "role": "system"},
                               {"content": USER["content"], "role": "user"}]}
EXPECTED_OUTPUT = {"messages": [{"content": "Sunny, 24 C.", "role": "assistant", "finish_reason": "stop",
                                 "index": 0}]}


def chat_with_events(tracer_provider, logger_provider, conversation="conv-logs") -> tuple[str, str]:
    """An LLM call that records its prompt and completion as GenAI events; (trace, span) hex."""
    tracer = tracer_provider.get_tracer("tests.agent")
    logger = logger_provider.get_logger("tests.agent")
    with tracer.start_as_current_span("chat gpt-4o") as llm:
        llm.set_attribute("gen_ai.operation.name", "chat")
        llm.set_attribute("gen_ai.request.model", "gpt-4o")
        llm.set_attribute("gen_ai.conversation.id", conversation)
        llm.set_attribute("gen_ai.usage.input_tokens", 42)
        for name, body in (("gen_ai.system.message", SYSTEM), ("gen_ai.user.message", USER),
                           ("gen_ai.choice", CHOICE)):
            logger.emit(event_name=name, body=body, attributes={"gen_ai.system": "openai"})
        logger.emit(body="an application log line, not a GenAI event")
        context = llm.get_span_context()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def recorded():
    """The spans and log records of one chat call, kept in memory to be exported in any order."""
    spans, records = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=RESOURCE)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(records))
    ids = chat_with_events(tracer_provider, logger_provider)
    return ids, spans.get_finished_spans(), records.get_finished_logs()


def session_of(server, session_id="conv-logs", headers=None) -> dict:
    response = requests.get(f"{server.url}/sessions/{session_id}", headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_events_sent_after_their_span_join_its_event(live_server):
    server = live_server()
    (trace, span_id), spans, records = recorded()
    assert OTLPSpanExporter(endpoint=f"{server.url}/v1/traces").export(spans).name == "SUCCESS"
    exporter = OTLPLogExporter(endpoint=f"{server.url}/v1/logs")
    assert exporter.export(records).name == "SUCCESS"
    assert exporter.export(records).name == "SUCCESS"  # a retry adds nothing

    session = session_of(server)
    assert (session["event_count"], session["total_tokens_in"]) == (1, 42)
    [llm] = session["events"]
    assert llm["event_id"] == f"{trace}:{span_id}"
    assert (llm["input_data"], llm["output_data"]) == (EXPECTED_INPUT, EXPECTED_OUTPUT)
    assert len(llm["metadata"]["log_records"]) == 3


def test_events_sent_before_their_span_are_kept_and_copied_into_it(live_server):
    # What the SDK does by default: log records go out while the span is still open.
    server = live_server()
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces")))
    logger_provider = LoggerProvider(resource=RESOURCE)
    logger_provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{server.url}/v1/logs")))
    trace, span_id = chat_with_events(tracer_provider, logger_provider)
    logger_provider.shutdown()
    tracer_provider.shutdown()

    # The records reached obsctl first, in a session named after the trace; the span named
    # the conversation and took them along.
    assert requests.get(f"{server.url}/sessions/{trace}", timeout=10).status_code == 404
    session = session_of(server)
    assert (session["event_count"], session["total_tokens_in"]) == (4, 42)
    events = {e["event_id"]: e for e in session["events"]}
    llm = events.pop(f"{trace}:{span_id}")
    assert (llm["event_type"], llm["input_data"], llm["output_data"]) == (
        "llm_call", EXPECTED_INPUT, EXPECTED_OUTPUT)
    assert sorted(e["metadata"]["log_event"] for e in events.values()) == [
        "gen_ai.choice", "gen_ai.system.message", "gen_ai.user.message"]
    for event in events.values():
        assert event["event_id"].startswith(f"{trace}:{span_id}:")
        assert (event["event_type"], event["parent_id"]) == ("generic", f"{trace}:{span_id}")
        assert event["tokens_in"] is None
    user = next(e for e in events.values() if e["metadata"]["log_event"] == "gen_ai.user.message")
    assert user["input_data"] == {"messages": [{"content": USER["content"], "role": "user"}]}



def test_records_first_then_span_then_records_again(live_server):
    # Exported in the other order, with a retry of the records after the span arrived.
    server = live_server()
    (trace, span_id), spans, records = recorded()
    logs = OTLPLogExporter(endpoint=f"{server.url}/v1/logs")
    assert logs.export(records).name == "SUCCESS"
    assert session_of(server, trace)["event_count"] == 3
    assert OTLPSpanExporter(endpoint=f"{server.url}/v1/traces").export(spans).name == "SUCCESS"
    assert logs.export(records).name == "SUCCESS"
    session = session_of(server)
    assert session["event_count"] == 4
    llm = {e["event_id"]: e for e in session["events"]}[f"{trace}:{span_id}"]
    assert (llm["input_data"], llm["output_data"]) == (EXPECTED_INPUT, EXPECTED_OUTPUT)


def test_grpc_log_exporter(live_server):
    port = free_port()
    server = live_server({"SERVICE_API_KEY": "k"}, args=("--otlp-grpc-port", str(port)))
    (trace, span_id), spans, records = recorded()
    assert OTLPSpanExporter(endpoint=f"{server.url}/v1/traces",
                            headers={"X-API-Key": "k"}).export(spans).name == "SUCCESS"
    refused = GrpcLogExporter(endpoint=f"http://127.0.0.1:{port}", insecure=True)
    assert refused.export(records).name == "FAILURE"
    refused.shutdown()
    exporter = GrpcLogExporter(endpoint=f"http://127.0.0.1:{port}", insecure=True,
                               headers=(("x-api-key", "k"),), compression=grpc.Compression.Gzip)
    assert exporter.export(records).name == "SUCCESS"
    exporter.shutdown()
    [llm] = session_of(server, headers={"X-API-Key": "k"})["events"]
    assert (llm["input_data"], llm["output_data"]) == (EXPECTED_INPUT, EXPECTED_OUTPUT)
    assert "LogsService/Export\" OK" in server.log()


def log_record(event_name: str | None, *, body=None, attrs=None, trace=TRACE, span_id="00f067aa0ba902b7",
               time=T0) -> dict:
    record = {"timeUnixNano": str(time), "attributes": attributes(attrs or {})}
    if event_name:
        record["eventName"] = event_name
    if body is not None:
        from tests.otlp_support import any_value

        record["body"] = any_value(body)
    if trace:
        record["traceId"] = trace
    if span_id:
        record["spanId"] = span_id
    return record


def logs_request(*records: dict, resource: dict | None = None) -> dict:
    return {"resourceLogs": [{
        "resource": {"attributes": attributes(resource or {"service.name": "test-service"})},
        "scopeLogs": [{"scope": {"name": "tests"}, "logRecords": list(records)}],
    }]}


def post_logs(server, document: dict, **kwargs) -> requests.Response:
    return requests.post(f"{server.url}/v1/logs", json=document, timeout=10, **kwargs)


def test_hand_built_json_partial_success_and_details_event(live_server):
    server = live_server()
    chat = span("00f067aa0ba902b7", attrs={"gen_ai.operation.name": "chat", "session.id": "s-json"})
    assert requests.post(f"{server.url}/v1/traces", json=request(chat), timeout=10).json() == {}

    details = log_record("gen_ai.client.inference.operation.details", time=T0 + 5 * MS, attrs={
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}]',
        "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "Hello"}],
                                    "finish_reason": "stop"}],
        "gen_ai.system_instructions": '[{"type": "text", "content": "Be brief."}]',
    })
    evaluation = log_record(None, time=T0 + 6 * MS, attrs={
        "event.name": "gen_ai.evaluation.result", "gen_ai.evaluation.name": "relevance",
        "gen_ai.evaluation.score.value": 0.9})
    answer = post_logs(server, logs_request(
        details, evaluation,
        log_record("gen_ai.user.message", body={"content": "x"}, trace="zz"),  # a bad trace id
        log_record("gen_ai.user.message", body={"content": "y"}, trace=None, span_id=None),  # no session
        log_record(None, body="plain log"),  # not a GenAI event: ignored
        log_record("gen_ai.user.message", body={"content": "z"}, time=0),  # no time
    ))
    assert answer.status_code == 200
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "3"
    assert partial["errorMessage"].startswith("3 log records rejected: resourceLogs[0].scopeLogs[0]."
                                              "logRecords[2]: traceId must be 16 bytes, not all zero; ")
    assert "no trace id and no session id" in partial["errorMessage"]
    assert "logRecords[5]: timeUnixNano and observedTimeUnixNano are missing" in partial["errorMessage"]

    [llm] = session_of(server, "s-json")["events"]
    assert llm["input_data"] == {
        "messages": [{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}],
        "system_instructions": [{"type": "text", "content": "Be brief."}]}
    assert llm["output_data"] == {"messages": [{"role": "assistant", "parts": [{"type": "text", "content": "Hello"}],
                                                "finish_reason": "stop"}]}
    assert llm["metadata"]["gen_ai_events"] == [{"name": "gen_ai.evaluation.result", "attributes": {
        "event.name": "gen_ai.evaluation.result", "gen_ai.evaluation.name": "relevance",
        "gen_ai.evaluation.score.value": 0.9}}]


def test_records_without_a_span_use_their_session_or_trace(live_server):
    server = live_server()
    answer = post_logs(server, logs_request(
        log_record("gen_ai.user.message", body={"content": "hello"}, trace=None, span_id=None,
                   attrs={"gen_ai.conversation.id": "conv-free"}),
        log_record("gen_ai.assistant.message", body={"content": "from a trace"}, span_id=None),
    ))
    assert answer.json() == {}
    [free] = session_of(server, "conv-free")["events"]
    assert free["event_id"].startswith("log:") and free["parent_id"] is None
    assert free["input_data"] == {"messages": [{"content": "hello", "role": "user"}]}
    [traced] = session_of(server, TRACE)["events"]
    assert traced["event_id"].startswith(f"{TRACE}:log:")
    assert traced["input_data"] == {"messages": [{"content": "from a trace", "role": "assistant"}]}


def test_protobuf_gzip_and_the_http_conventions(live_server):
    server = live_server({"SERVICE_API_KEY": "k", "OBSCTL_MAX_BODY_BYTES": "20000"})
    key = {"X-API-Key": "k"}
    assert requests.post(f"{server.url}/v1/traces", data=to_protobuf(request(span(
        "00f067aa0ba902b7", attrs={"session.id": "s-pb"}))), timeout=10,
        headers={**key, "Content-Type": "application/x-protobuf"}).status_code == 200
    document = logs_request(log_record("gen_ai.user.message", body={"content": "pb"}))
    for record in document["resourceLogs"][0]["scopeLogs"][0]["logRecords"]:
        record["traceId"] = _b64(record["traceId"])
        record["spanId"] = _b64(record["spanId"])
    body = ParseDict(document, ExportLogsServiceRequest()).SerializeToString()
    headers = {**key, "Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}

    assert requests.post(f"{server.url}/v1/logs", data=gzip.compress(body), timeout=10,
                         headers={"Content-Type": "application/x-protobuf"}).status_code == 401
    answer = requests.post(f"{server.url}/v1/logs", data=gzip.compress(body), headers=headers, timeout=10)
    assert (answer.status_code, answer.headers["Content-Type"]) == (200, "application/x-protobuf")
    assert ExportLogsServiceResponse.FromString(answer.content) == ExportLogsServiceResponse()
    [llm] = session_of(server, "s-pb", headers=key)["events"]
    assert llm["input_data"] == {"messages": [{"content": "pb", "role": "user"}]}

    text = requests.post(f"{server.url}/v1/logs", data="x", timeout=10,
                         headers={**key, "Content-Type": "text/plain"})
    assert text.status_code == 415
    bad = requests.post(f"{server.url}/v1/logs", data=b"\xff\xff", timeout=10,
                        headers={**key, "Content-Type": "application/x-protobuf"})
    assert bad.status_code == 400 and "ExportLogsServiceRequest" in bad.json()["error"]
    bomb = gzip.compress(b"\x00" * 50_000)
    large = requests.post(f"{server.url}/v1/logs", data=bomb, headers=headers, timeout=10)
    assert large.status_code == 413
    assert post_logs(server, {"resourceLogs": "no"}, headers=key).status_code == 400
    scope = post_logs(server, {"resourceLogs": [{"scopeLogs": [{"scope": [None], "logRecords": []}]}]},
                      headers=key)
    assert (scope.status_code, scope.json()) == (400, {"error": "resourceLogs[0].scopeLogs[0].scope must be an object"})
    assert post_logs(server, {}, headers=key).json() == {}


def _b64(hex_id: str) -> str:
    import base64

    return base64.b64encode(bytes.fromhex(hex_id)).decode()
