"""What one OTLP export may cost, against real `obsctl serve` processes: at most OBSCTL_MAX_SPANS
spans (or log records) per request, refused before any is converted, as /events refuses a batch
over OBSCTL_MAX_BATCH; over gRPC the key is checked before the message is read, and messages
over OBSCTL_GRPC_MAX_MESSAGE_BYTES are refused."""

from __future__ import annotations

import gzip

import grpc
import orjson
import pytest
import requests

from tests.conftest import free_port
from tests.obsctl.otlp.test_otlp_logs import log_record, logs_request
from tests.otlp_support import request, span, to_protobuf

KEY = "otlp-limits"
HEADERS = {"X-API-Key": KEY}
TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


def spans(count: int) -> dict:
    return request(*(span(f"{i + 1:016x}", attrs={"session.id": "capped"}) for i in range(count)))


@pytest.mark.sqlite_only
def test_more_spans_than_the_cap_are_refused_like_a_batch_over_the_limit(live_server, backend):
    server = live_server({"SERVICE_API_KEY": KEY, "OBSCTL_MAX_SPANS": "5", "OBSCTL_MAX_BATCH": "5",
                          "OBSCTL_RATE_LIMITS": "off"})
    batch = requests.post(f"{server.url}/events", json={"events": [{"session_id": "b"}] * 6},
                          headers=HEADERS, timeout=10)
    assert batch.status_code == 413
    assert batch.json() == {"error": "batch has 6 events; at most 5 are accepted per request"}
    expected = {"error": "request has 6 spans; at most 5 are accepted per request"}
    protobuf = to_protobuf(spans(6))
    for data, content_type, encoding in ((protobuf, "application/x-protobuf", "identity"),
                                         (gzip.compress(protobuf), "application/x-protobuf", "gzip"),
                                         (orjson.dumps(spans(6)), "application/json", "identity")):
        answer = requests.post(f"{server.url}/v1/traces", data=data, timeout=10, headers={
            **HEADERS, "Content-Type": content_type, "Content-Encoding": encoding})
        assert (answer.status_code, answer.json()) == (413, expected), (content_type, encoding)
    records = logs_request(*(log_record("gen_ai.user.message", body={"content": "x"}) for _ in range(6)))
    logs = requests.post(f"{server.url}/v1/logs", json=records, headers=HEADERS, timeout=10)
    assert (logs.status_code, logs.json()) == (
        413, {"error": "request has 6 log records; at most 5 are accepted per request"})
    # Nothing of the refused requests was stored; the cap itself is allowed.
    assert requests.get(f"{server.url}/sessions/capped", headers=HEADERS, timeout=10).status_code == 404
    ok = requests.post(f"{server.url}/v1/traces", json=spans(5), headers=HEADERS, timeout=10)
    assert ok.status_code == 200
    capped = requests.get(f"{server.url}/sessions/capped", headers=HEADERS, timeout=10).json()
    assert capped["event_count"] == 5


@pytest.mark.sqlite_only
def test_grpc_checks_the_key_before_reading_the_message_and_caps_messages_and_spans(live_server, backend):
    port = free_port()
    server = live_server({"SERVICE_API_KEY": KEY, "OBSCTL_MAX_BODY_BYTES": "100000",
                          "OBSCTL_GRPC_MAX_MESSAGE_BYTES": "20000", "OBSCTL_MAX_SPANS": "5",
                          "OBSCTL_RATE_LIMITS": "off"}, args=("--otlp-grpc-port", str(port)))
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        traces = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
        logs = channel.unary_unary(LOGS_EXPORT, request_serializer=None, response_deserializer=None)

        def code(call, body: bytes, metadata=()):
            try:
                call(body, metadata=metadata, timeout=10)
                return "OK", ""
            except grpc.RpcError as exc:
                return exc.code().name, exc.details()

        # A message far over the limit without the key: refused for the key, from the metadata
        # alone (reading it first would have found it too large).
        assert code(traces, b"\x0a" + b"x" * 500_000)[0] == "UNAUTHENTICATED"
        assert code(logs, b"\x0a" + b"x" * 500_000, (("x-api-key", "wrong"),))[0] == "UNAUTHENTICATED"
        # With the key, over OBSCTL_GRPC_MAX_MESSAGE_BYTES (under the HTTP body limit): refused.
        key = (("x-api-key", KEY),)
        assert code(traces, b"\x0a" + b"x" * 30_000, key)[0] == "RESOURCE_EXHAUSTED"
        assert code(traces, to_protobuf(spans(6)), key) == (
            "RESOURCE_EXHAUSTED", "request has 6 spans; at most 5 are accepted per request")
        assert code(traces, to_protobuf(spans(5)), key) == ("OK", "")
    assert '"gRPC TraceService/Export" UNAUTHENTICATED' in server.log()
