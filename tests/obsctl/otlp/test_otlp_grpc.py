"""OTLP/gRPC: a real `obsctl serve --otlp-grpc-port` on 127.0.0.1, fed by the OpenTelemetry
SDK's gRPC exporter and by hand-built calls on a plain grpcio channel (to see the exact status
codes and the partial_success answer)."""

import base64
import gzip
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
import requests
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from obsctl.config import Settings
from obsctl.errors import InvalidInput
from obsctl.web.grpc_server import _peer_host, _status_with_retry_info
from tests.conftest import free_port
from tests.obsctl.otlp.test_otlp_sdk import provider_for, run_agent
from tests.otlp_support import TRACE, request, span, to_protobuf

pytestmark = pytest.mark.e2e

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
METRICS_EXPORT = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
RECORDINGS = Path(__file__).resolve().parents[2] / "data" / "otlp"


def grpc_server(live_server, env: dict | None = None):
    for attempt in range(3):
        port = free_port()
        try:
            server = live_server(env, args=("--otlp-grpc-port", str(port)))
        except RuntimeError as exc:  # another process took the free port before the server bound it
            if "Address already in use" in str(exc) and attempt < 2:
                continue
            raise
        server.grpc_target = f"127.0.0.1:{port}"
        return server
    raise AssertionError("unreachable")


def export(target: str, body: bytes, *, metadata=(), compression=None):
    """One TraceService/Export call with `body` as the serialized request."""
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None,
                                   response_deserializer=ExportTraceServiceResponse.FromString)
        return call(body, metadata=metadata, timeout=10, compression=compression)


def export_error(target: str, body: bytes, **kwargs) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        export(target, body, **kwargs)
    return caught.value


def agent_spans():
    memory = InMemorySpanExporter()
    run_agent(provider_for(memory, batch=False))
    return memory.get_finished_spans()


def test_sdk_grpc_exporter_with_gzip(live_server):
    server = grpc_server(live_server)
    assert f"obsctl serving OTLP/gRPC on {server.grpc_target}" in server.log()
    exporter = OTLPSpanExporter(endpoint=f"http://{server.grpc_target}", insecure=True,
                                compression=grpc.Compression.Gzip)
    spans = agent_spans()
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    assert exporter.export(spans) == SpanExportResult.SUCCESS  # a retry: stored once
    exporter.shutdown()

    session = requests.get(f"{server.url}/sessions/conv-e2e", timeout=10).json()
    assert {k: session[k] for k in ("agent_name", "event_count", "error_count", "total_tokens_in",
                                    "total_tokens_out")} == {
        "agent_name": "planner", "event_count": 4, "error_count": 1, "total_tokens_in": 120,
        "total_tokens_out": 30}
    tool = next(e for e in session["events"] if e["event_type"] == "tool_call")
    assert tool["tool_call"] == {"name": "get_weather", "input": {"city": "Paris"}, "output": {"temp_c": 21}}
    assert re.search(r'INFO obsctl.grpc 127.0.0.1 "gRPC TraceService/Export" OK .*\(4 spans, 0 rejected\)',
                     server.log())


def test_partial_success_names_the_rejected_span(live_server):
    server = grpc_server(live_server)
    body = to_protobuf(request(
        span("00f067aa0ba902b7", attrs={"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": -3,
                                        "session.id": "grpc-partial"}),
        span("00f067aa0ba902b8", attrs={"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 7,
                                        "session.id": "grpc-partial"}),
    ))
    answer = export(server.grpc_target, body)
    assert answer.partial_success.rejected_spans == 1
    assert answer.partial_success.error_message == (
        f"1 span rejected: {TRACE}:00f067aa0ba902b7: tokens_in must be a non-negative integer, got -3")
    session = requests.get(f"{server.url}/sessions/grpc-partial", timeout=10).json()
    assert (session["event_count"], session["total_tokens_in"]) == (1, 7)
    # Everything used: an empty response, no partial_success.
    ok = export(server.grpc_target, to_protobuf(request(span("00f067aa0ba902b9"))))
    assert not ok.HasField("partial_success")
    assert export(server.grpc_target, b"") == ExportTraceServiceResponse()  # an empty request


def test_undecodable_request_is_invalid_argument(live_server):
    server = grpc_server(live_server)
    error = export_error(server.grpc_target, b"\xff\xff\xff\xff")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("cannot decode the protobuf body as an ExportTraceServiceRequest")


def test_api_key_in_metadata(live_server):
    server = grpc_server(live_server, {"SERVICE_API_KEY": "s3cret"})
    body = to_protobuf(request(span("00f067aa0ba902b7", attrs={"session.id": "keyed"})))
    missing = export_error(server.grpc_target, body)
    assert missing.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "x-api-key" in missing.details()
    wrong = export_error(server.grpc_target, body, metadata=(("x-api-key", "nope"),))
    assert (wrong.code(), wrong.details()) == (grpc.StatusCode.UNAUTHENTICATED, "invalid API key")
    assert requests.get(f"{server.url}/sessions", headers={"X-API-Key": "s3cret"},
                        timeout=10).json()["total"] == 0

    exporter = OTLPSpanExporter(endpoint=f"http://{server.grpc_target}", insecure=True,
                                headers=(("x-api-key", "s3cret"),))
    assert exporter.export(agent_spans()) == SpanExportResult.SUCCESS
    exporter.shutdown()
    session = requests.get(f"{server.url}/sessions/conv-e2e", headers={"X-API-Key": "s3cret"},
                           timeout=10).json()
    assert session["event_count"] == 4

    # The key as a Bearer token or a Basic password (the Langfuse SDKs' way) is the key too.
    bearer = (("authorization", "Bearer s3cret"),)
    body = to_protobuf(request(span("00f067aa0ba902b8", attrs={"session.id": "bearer"})))
    assert export(server.grpc_target, body, metadata=bearer) == ExportTraceServiceResponse()
    basic = (("authorization", "Basic " + base64.b64encode(b"pk-lf-test:s3cret").decode()),)
    body = to_protobuf(request(span("00f067aa0ba902b9", attrs={"session.id": "basic"})))
    assert export(server.grpc_target, body, metadata=basic) == ExportTraceServiceResponse()
    wrong_basic = (("authorization", "Basic " + base64.b64encode(b"s3cret:wrong").decode()),)
    assert export_error(server.grpc_target, body, metadata=wrong_basic).code() == grpc.StatusCode.UNAUTHENTICATED

    # Metrics (Traceloop's, as recorded) are accepted and dropped, behind the same key.
    metrics = (RECORDINGS / "traceloop" / "bodies" / "0002.bin").read_bytes()
    with grpc.insecure_channel(server.grpc_target) as channel:
        call = channel.unary_unary(METRICS_EXPORT, request_serializer=None,
                                   response_deserializer=ExportMetricsServiceResponse.FromString)
        assert call(metrics, metadata=bearer, timeout=10) == ExportMetricsServiceResponse()
        with pytest.raises(grpc.RpcError) as refused:
            call(metrics, timeout=10)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as garbage:
            call(b"\xff\xff\xff", metadata=bearer, timeout=10)
        assert garbage.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert requests.get(f"{server.url}/sessions", headers={"X-API-Key": "s3cret"},
                        timeout=10).json()["total"] == 3
    # Over HTTP the request gate reads the same headers before it reads a body.
    langfuse = (RECORDINGS / "langfuse-v5" / "bodies" / "0001.bin").read_bytes()
    headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}
    url = f"{server.url}/api/public/otel/v1/traces"
    assert requests.post(url, data=langfuse, headers={**headers, "Authorization": wrong_basic[0][1]},
                         timeout=10).status_code == 401
    assert requests.post(url, data=langfuse, headers={**headers, "Authorization": basic[0][1]},
                         timeout=10).status_code == 200


def test_size_limit_applies_after_gzip(live_server):
    limit = 20_000
    server = grpc_server(live_server, {"OBSCTL_MAX_BODY_BYTES": str(limit)})
    padding = "x" * 30_000  # compresses to a few hundred bytes, expands past the limit
    big = to_protobuf(request(span("00f067aa0ba902b7", attrs={"session.id": "big", "pad": padding})))
    assert len(gzip.compress(big)) < limit < len(big)
    error = export_error(server.grpc_target, big, compression=grpc.Compression.Gzip)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert requests.get(f"{server.url}/sessions", timeout=10).json()["total"] == 0
    small = to_protobuf(request(span("00f067aa0ba902b7", attrs={"session.id": "small", "pad": "x" * 100})))
    assert not export(server.grpc_target, small, compression=grpc.Compression.Gzip).HasField("partial_success")
    assert requests.get(f"{server.url}/sessions/small", timeout=10).status_code == 200


def test_rate_limit_is_shared_with_http_and_carries_retry_info(live_server):
    server = grpc_server(live_server, {"OBSCTL_RATE_LIMITS": "events=3/minute"})
    body = to_protobuf(request(span("00f067aa0ba902b7", attrs={"session.id": "limited"})))
    export(server.grpc_target, body)
    export(server.grpc_target, body)
    http = requests.post(f"{server.url}/v1/traces", data=body,
                         headers={"Content-Type": "application/x-protobuf"}, timeout=10)
    assert http.status_code == 200 and http.headers["RateLimit-Remaining"] == "0"
    error = export_error(server.grpc_target, body)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error.details().startswith("rate limit exceeded; retry in ")
    details = dict(error.trailing_metadata())["grpc-status-details-bin"]
    assert b"type.googleapis.com/google.rpc.RetryInfo" in details
    # google.rpc.Status.code first (test_retry_info_status_decodes_as_google_rpc_status reads it all).
    assert details[:2] == bytes([0x08, grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]])
    assert requests.post(f"{server.url}/v1/traces", data=body, timeout=10,
                         headers={"Content-Type": "application/x-protobuf"}).status_code == 429


def test_retry_info_status_decodes_as_google_rpc_status():
    # google.rpc.Status and RetryInfo declared here (googleapis protos are not a dependency).
    from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, duration_pb2, message_factory

    pool = descriptor_pool.DescriptorPool()
    for module in (any_pb2, duration_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        pool.Add(proto)
    status_file = descriptor_pb2.FileDescriptorProto(
        name="status_test.proto", package="google.rpc",
        dependency=["google/protobuf/any.proto", "google/protobuf/duration.proto"])
    status = status_file.message_type.add(name="Status")
    status.field.add(name="code", number=1, type=5, label=1)
    status.field.add(name="message", number=2, type=9, label=1)
    status.field.add(name="details", number=3, type=11, label=3, type_name=".google.protobuf.Any")
    retry = status_file.message_type.add(name="RetryInfo")
    retry.field.add(name="retry_delay", number=1, type=11, label=1, type_name=".google.protobuf.Duration")
    pool.Add(status_file)
    Status = message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.Status"))
    RetryInfo = message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.RetryInfo"))

    decoded = Status.FromString(_status_with_retry_info(8, "rate limit exceeded; retry in 42 s", 42))
    assert (decoded.code, decoded.message, len(decoded.details)) == (8, "rate limit exceeded; retry in 42 s", 1)
    assert decoded.details[0].type_url == "type.googleapis.com/google.rpc.RetryInfo"
    assert RetryInfo.FromString(decoded.details[0].value).retry_delay.seconds == 42


def test_sigterm_stops_grpc_and_http(live_server):
    server = grpc_server(live_server)
    export(server.grpc_target, to_protobuf(request(span("00f067aa0ba902b7", attrs={"session.id": "s"}))))
    assert server.stop(signal.SIGTERM) == 0
    assert "obsctl server stopped" in server.log()
    with grpc.insecure_channel(server.grpc_target) as channel, pytest.raises(grpc.FutureTimeoutError):
        grpc.channel_ready_future(channel).result(timeout=1)


def test_sigterm_lets_a_grpc_call_in_progress_finish(live_server):
    server = grpc_server(live_server)
    spans = [span(f"{i + 1:016x}", attrs={"session.id": "drained", "gen_ai.request.model": "m",
                                          "gen_ai.usage.input_tokens": 1}) for i in range(3000)]
    body = to_protobuf(request(*spans))
    channel = grpc.insecure_channel(server.grpc_target)
    call = channel.unary_unary(TRACE_EXPORT, request_serializer=None,
                               response_deserializer=ExportTraceServiceResponse.FromString)
    pending = call.future(body, timeout=60)
    time.sleep(0.3)  # the request is in; storing 3,000 spans takes longer than that here
    assert server.stop(signal.SIGTERM) == 0
    assert pending.result() == ExportTraceServiceResponse()
    channel.close()
    log = server.log()
    assert log.index('"gRPC TraceService/Export" OK') < log.index("obsctl server stopped")
    # Everything the answer acknowledged is in the database (a new server on the same one).
    restarted = live_server()
    session = requests.get(f"{restarted.url}/sessions/drained", timeout=10).json()
    assert (session["event_count"], session["total_tokens_in"]) == (3000, 3000)


def test_without_grpcio_the_option_is_a_one_line_error(tmp_path, db_path):
    # A `grpc` package that cannot be imported, first on the path: as if grpcio were absent.
    fake = tmp_path / "nogrpc" / "grpc"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("No module named grpc")\n')
    env = {**os.environ, "PYTHONPATH": str(fake.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "obsctl", "--db", str(db_path), "serve", "--port", "0",
         "--otlp-grpc-port", "4317"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "Error: --otlp-grpc-port needs grpcio, which cannot be imported (No module named grpc); "
        "install it with: pip install 'obsctl[grpc]'"]
    # The environment variable asks for gRPC the same way.
    env["OBSCTL_OTLP_GRPC_PORT"] = "4317"
    done = subprocess.run([sys.executable, "-m", "obsctl", "--db", str(db_path), "serve", "--port", "0"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1


def test_grpc_port_in_use_is_a_one_line_error(live_server, tmp_path, db_path):
    server = grpc_server(live_server)
    port = server.grpc_target.rsplit(":", 1)[1]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "obsctl", "--db", str(tmp_path / "other.db"), "serve", "--port", "0",
         "--otlp-grpc-port", port], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"Error: cannot listen on 127.0.0.1:{port} for OTLP/gRPC")
    assert len(done.stderr.splitlines()) == 1
    assert time.monotonic() - started < 30


def test_grpc_port_setting_from_the_environment():
    assert Settings.from_env({}).otlp_grpc_port is None
    assert Settings.from_env({"OBSCTL_OTLP_GRPC_PORT": "4317"}).otlp_grpc_port == 4317
    assert Settings.from_env({"OBSCTL_OTLP_GRPC_PORT": " "}).otlp_grpc_port is None
    for bad in ("grpc", "70000", "-1"):
        with pytest.raises(InvalidInput, match="OBSCTL_OTLP_GRPC_PORT must be a port number"):
            Settings.from_env({"OBSCTL_OTLP_GRPC_PORT": bad})


def test_peer_addresses():
    assert _peer_host("ipv4:127.0.0.1:50312") == "127.0.0.1"
    assert _peer_host("ipv6:[::1]:50312") == "::1"
    assert _peer_host("unix:/tmp/s") == "unix:/tmp/s"
