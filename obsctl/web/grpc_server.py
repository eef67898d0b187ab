"""OTLP/gRPC ingest: `obsctl serve --otlp-grpc-port` (the OpenTelemetry Collector's default
protocol, port 4317 by convention).

The TraceService/Export, LogsService/Export and MetricsService/Export methods are served with a generic handler, so
no generated stubs are needed: the request arrives as the serialized export request, which the
same decoder, mapping and ingest service as `POST /v1/traces` and `POST /v1/logs` read, and the
answer is the same export response (partial_success with the rejected count and message).
Metrics are accepted and dropped, as `POST /v1/metrics` does (obsctl/services/otlp/metrics.py).
Writes go through the app's store, hence its writer queue, exactly as HTTP ingest does.

HTTP's conventions carried over: the API key (metadata `x-api-key`, else `authorization` Bearer
or Basic as HTTP reads it, when SERVICE_API_KEY is set,
else UNAUTHENTICATED) with the failed key checks per client address that HTTP counts
(OBSCTL_AUTH_FAILURE_LIMIT: RESOURCE_EXHAUSTED with a RetryInfo once over), the message limit
(OBSCTL_GRPC_MAX_MESSAGE_BYTES, default OBSCTL_MAX_BODY_BYTES, as gRPC's receive limit,
checked by grpcio after undoing gzip: RESOURCE_EXHAUSTED), the span cap (OBSCTL_MAX_SPANS:
RESOURCE_EXHAUSTED), and the per-client `events` rate limit, whose counter HTTP ingest shares
(RESOURCE_EXHAUSTED with a RetryInfo, which the exporters retry after the delay it gives). A
request that cannot be decoded is INVALID_ARGUMENT; a full writer queue is UNAVAILABLE
(retried); a full disk RESOURCE_EXHAUSTED without RetryInfo.

The key and the limits are checked from the call's metadata before its message is read: each
method is served as a client-streaming handler that reads the one message only once the call
may go ahead, on one of the `threads` workers, so a refused call costs no more than its
headers, and at most `threads` messages are read at once.

grpcio is an optional extra (`pip install obsctl[grpc]`); `grpc_missing()` says why it
cannot be used.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from obsctl.errors import (
    InvalidInput,
    ObsctlError,
    PayloadTooLarge,
    ServiceUnavailable,
    StorageDamaged,
    StorageError,
    StorageFull,
)
from obsctl.web.auth_limit import presented_key
from obsctl.web.client_address import client_address
from obsctl.web.security import auth_failures

log = logging.getLogger("obsctl.grpc")

TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService"
METRICS_SERVICE = "opentelemetry.proto.collector.metrics.v1.MetricsService"
INSTALL_HINT = "pip install 'obsctl[grpc]'"


def grpc_missing() -> str | None:
    """None when grpcio can be imported, else the one-line reason to show."""
    try:
        import grpc  # noqa: F401
    except ImportError as exc:
        return (f"--otlp-grpc-port needs grpcio, which cannot be imported ({exc}); "
                f"install it with: {INSTALL_HINT}")
    return None


class OtlpGrpcServer:
    """The OTLP/gRPC endpoint of one app: `start()` binds and serves, `stop()` drains."""

    def __init__(self, app, *, threads: int):
        import grpc

        self._grpc = grpc
        state = app.extensions["obsctl"]
        self.settings = state.settings
        self.store = state.store
        self.limiter = app.extensions.get("obsctl_limiter")
        self._limit = None
        if self.limiter is not None and self.settings.rate_limits is not None:
            from limits import parse as parse_limit

            self._limit = parse_limit(self.settings.rate_limits.get("events",
                                                                    self.settings.rate_limits["default"]))
        self.failures = auth_failures(app)
        # gRPC's receive limit is checked on the message after decompression; a larger one
        # is refused with RESOURCE_EXHAUSTED before any of it reaches obsctl.
        limit = self.settings.grpc_max_message_bytes or self.settings.max_body_bytes
        self.server = grpc.server(
            ThreadPoolExecutor(max_workers=threads, thread_name_prefix="obsctl-grpc"),
            options=[("grpc.max_receive_message_length", limit),
                     ("grpc.max_send_message_length", 4 * 1024 * 1024),
                     ("grpc.so_reuseport", 0), ("grpc.http2.bdp_probe", 0)],
            maximum_concurrent_rpcs=max(threads, self.settings.connection_limit),
        )
        methods = {f"/{TRACE_SERVICE}/Export": ("TraceService/Export", self._export_traces),
                   f"/{LOGS_SERVICE}/Export": ("LogsService/Export", self._export_logs),
                   f"/{METRICS_SERVICE}/Export": ("MetricsService/Export", self._export_metrics)}

        served = self

        class Methods(grpc.GenericRpcHandler):
            def service(self, details):
                found = methods.get(details.method)
                if found is None:
                    return None  # UNIMPLEMENTED
                name, work = found
                return grpc.stream_unary_rpc_method_handler(
                    lambda messages, context: served._call(name, context, messages, work))

        self.server.add_generic_rpc_handlers([Methods()])
        self.port: int | None = None

    def start(self, host: str, port: int) -> int:
        """Bind `host:port` (0: any free port) and start serving; the bound port."""
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if port:
            _check_free(host, port, address)
        try:
            bound = self.server.add_insecure_port(address)
        except RuntimeError as exc:
            raise ServiceUnavailable(f"cannot listen on {address} for OTLP/gRPC: {exc}") from None
        if not bound:
            raise ServiceUnavailable(f"cannot listen on {address} for OTLP/gRPC (port in use?)")
        self.server.start()
        self.port = bound
        return bound

    def stop(self, grace: float) -> None:
        """Refuse new calls, let the calls in progress finish (up to `grace` seconds)."""
        self.server.stop(grace).wait(grace + 5)

    # --- the three methods --------------------------------------------------------------

    def _export_traces(self, request: bytes) -> tuple[bytes, str]:
        from obsctl.services.otlp import ingest_otlp, wire

        result = ingest_otlp(self.store, request, wire.PROTOBUF, max_future=self.settings.max_future_skew,
                             max_spans=self.settings.max_spans)
        note = f"{result.spans} spans, {result.rejected_spans} rejected"
        return wire.encode_response(result.rejected_spans, result.error_message(), wire.PROTOBUF), note

    def _export_logs(self, request: bytes) -> tuple[bytes, str]:
        from obsctl.services.otlp import logs, wire

        result = logs.ingest_logs(self.store, request, wire.PROTOBUF, max_future=self.settings.max_future_skew,
                                  max_records=self.settings.max_spans)
        note = f"{result.records} log records, {result.rejected_records} rejected"
        return logs.encode_logs_response(result.rejected_records, result.error_message(), wire.PROTOBUF), note

    def _export_metrics(self, request: bytes) -> tuple[bytes, str]:
        from obsctl.services.otlp import metrics, wire

        count = metrics.accept_metrics(request, wire.PROTOBUF)
        return metrics.encode_metrics_response(wire.PROTOBUF), f"{count} metrics, dropped"

    def _call(self, method: str, context, messages, work) -> bytes:
        started = time.perf_counter()
        grpc = self._grpc
        metadata = context.invocation_metadata()
        client = client_address(_peer_host(context.peer()), _metadata(metadata, "x-forwarded-for"),
                                self.settings.trusted_proxies)
        code, message, retry_after = None, "", None
        answer, note = b"", ""
        problem = self._refusal(metadata, client)
        if problem is not None:
            code, message, retry_after = problem
        else:
            try:
                answer, note = work(_one_message(messages))
            except grpc.RpcError:  # the call ended while its message came (cancelled, too large)
                log.info('%s "gRPC %s" ended by the client or by the message limit', client, method)
                return b""
            except InvalidInput as exc:
                code, message = grpc.StatusCode.INVALID_ARGUMENT, exc.message
            except PayloadTooLarge as exc:
                code, message = grpc.StatusCode.RESOURCE_EXHAUSTED, exc.message
            except ServiceUnavailable as exc:
                code, message = grpc.StatusCode.UNAVAILABLE, exc.message
            except StorageFull as exc:
                log.warning("write refused: %s", exc.message)
                code, message = grpc.StatusCode.RESOURCE_EXHAUSTED, exc.message
            except StorageDamaged as exc:
                log.error("database error: %s (run `obsctl db info` to check the file)", exc.message)
                code, message = grpc.StatusCode.INTERNAL, "the database file is damaged; the operator must restore it"
            except StorageError as exc:
                log.error("%s", exc.message, exc_info=exc)
                code, message = grpc.StatusCode.INTERNAL, "internal server error"
            except ObsctlError as exc:
                code, message = grpc.StatusCode.INVALID_ARGUMENT, exc.message
            except Exception:
                log.exception("unhandled error in %s", method)
                code, message = grpc.StatusCode.INTERNAL, "internal server error"
        if log.isEnabledFor(logging.INFO):
            ms = (time.perf_counter() - started) * 1000
            status = code.name if code is not None else "OK"
            log.info('%s "gRPC %s" %s %.1fms%s', client, method, status, ms, f" ({note})" if note else "")
        if code is None:
            return answer
        if retry_after is not None:
            context.set_trailing_metadata([("grpc-status-details-bin",
                                            _status_with_retry_info(code.value[0], message, retry_after))])
        context.abort(code, message)
        raise AssertionError("unreachable: context.abort raises")  # pragma: no cover

    def _refusal(self, metadata, client: str):
        """(code, message, retry-after seconds or None) when the call may not go ahead."""
        grpc = self._grpc
        expected = self.settings.api_key
        if expected:
            provided = presented_key(_metadata(metadata, "x-api-key"), _metadata(metadata, "authorization"))
            refusal = self.failures.check(client, provided, expected)
            if refusal is not None:
                if refusal.status == 429:
                    return grpc.StatusCode.RESOURCE_EXHAUSTED, refusal.message, refusal.retry_after
                problem = refusal.message
                if problem.startswith("missing"):
                    problem = "missing API key: send it in the x-api-key metadata (OTEL_EXPORTER_OTLP_HEADERS)"
                return grpc.StatusCode.UNAUTHENTICATED, problem, None
        if self._limit is not None:
            strategy = self.limiter.limiter
            try:
                # The key flask-limiter gives the shared `events` limit of POST /events and
                # /v1/traces: one counter per client address for HTTP and gRPC together.
                allowed = strategy.hit(self._limit, client, "events")
                if not allowed:
                    reset_at, _ = strategy.get_window_stats(self._limit, client, "events")
                    wait = max(1, int(reset_at - time.time()))
                    return (grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"rate limit exceeded; retry in {wait} s", wait)
            except Exception:  # the shared store (Redis) is down: do as HTTP does, let it through
                log.warning("rate limit storage unavailable; not limiting this gRPC call")
        return None


def _metadata(metadata, name: str) -> str | None:
    value = next((v for k, v in metadata or () if k == name), None)
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _one_message(messages) -> bytes:
    """The call's request message (a unary call sends exactly one), read only now."""
    message = next(messages, None)
    if message is None:
        raise InvalidInput("the call carried no request message")
    return message


def _check_free(host: str, port: int, address: str) -> None:
    """Refuse a port in use with obsctl's one-line message (grpcio would log its own lines)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ServiceUnavailable(f"cannot listen on {address} for OTLP/gRPC: {exc.strerror or exc}") from None
    family, kind, proto, _, where = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(where)
        except OSError as exc:
            raise ServiceUnavailable(
                f"cannot listen on {address} for OTLP/gRPC: {exc.strerror or exc}") from None


def _peer_host(peer: str) -> str:
    """The client address of a gRPC peer string: `ipv4:127.0.0.1:5000`, `ipv6:[::1]:5000`."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0] or rest
    if kind == "ipv6":
        host = rest.rpartition(":")[0]
        return host.strip("[]") or rest
    return peer


# --- google.rpc.Status with a RetryInfo, encoded by hand (no googleapis protos needed) ----

def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _status_with_retry_info(code: int, message: str, seconds: int) -> bytes:
    """`google.rpc.Status{code, message, details: [Any(google.rpc.RetryInfo{retry_delay})]}`:
    what OTLP exporters read to retry a RESOURCE_EXHAUSTED after the given delay."""
    duration = _varint(1 << 3 | 0) + _varint(seconds)  # google.protobuf.Duration.seconds
    retry_info = _field(1, duration)  # RetryInfo.retry_delay
    any_detail = _field(1, b"type.googleapis.com/google.rpc.RetryInfo") + _field(2, retry_info)
    return (_varint(1 << 3 | 0) + _varint(code) + _field(2, message.encode()) + _field(3, any_detail))
