"""`POST /v1/traces`, `POST /v1/logs` and `POST /v1/metrics`: OpenTelemetry OTLP/HTTP export
(protobuf or JSON, gzip). `POST /api/public/otel/v1/traces` is `/v1/traces` at the path the
Langfuse SDKs export to, so they need only their host pointed at obsctl."""

from flask import Blueprint, Response, request

from obsctl.models.otlp import (
    OtlpExportRequest,
    OtlpExportResponse,
    OtlpLogsExportRequest,
    OtlpLogsExportResponse,
)
from obsctl.params import IntParam
from obsctl.services.otlp import ingest_otlp, logs, metrics, wire
from obsctl.web.errors import error_body
from obsctl.web.http import bool_arg, get_settings, get_store, int_arg, json_response
from obsctl.web.openapi_util import (
    STORAGE_FULL,
    error_responses,
    int_query_param,
    operation,
    query_param,
    ref,
)

blueprint = Blueprint("otlp", __name__)
# Trace export is event ingest: it has the /events limit and shares its per-IP counter.
RATE_GROUP = "events"
FIRST_INDEX = IntParam("first_index", 0, 1_000_000_000, default=0)


def _read_body():
    """(wire format, decompressed body), or an error response (415) as the first item."""
    fmt = wire.MEDIA_TYPES.get(request.mimetype)
    if fmt is None:
        return json_response(error_body(
            f"unsupported Content-Type {request.mimetype or '(none)'!r}; "
            f"send application/x-protobuf or application/json"), 415), None
    encoding = (request.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding not in wire.ENCODINGS:
        return json_response(error_body(
            f"unsupported Content-Encoding {encoding!r}; send gzip, deflate or identity"), 415), None
    # MAX_CONTENT_LENGTH bounds the compressed body; decompress() bounds what it expands to.
    return fmt, wire.decompress(request.get_data(cache=False), encoding, get_settings().max_body_bytes)


LANGFUSE_TRACES = "/api/public/otel/v1/traces"


@blueprint.post("/v1/traces")
@blueprint.post(LANGFUSE_TRACES)
def export_traces():
    fmt, body = _read_body()
    if body is None:
        return fmt
    summary = bool_arg("summary") and fmt == wire.JSON
    first_index = FIRST_INDEX.check(int_arg("first_index"))
    settings = get_settings()
    result = ingest_otlp(get_store(), body, fmt, max_future=settings.max_future_skew,
                         first_index=first_index, max_spans=settings.max_spans)
    extra = {"obsctl": _summary(result)} if summary else None
    return Response(wire.encode_response(result.rejected_spans, result.error_message(), fmt, extra),
                    status=200, mimetype=wire.RESPONSE_MEDIA_TYPE[fmt])


@blueprint.post("/v1/logs")
def export_logs():
    fmt, body = _read_body()
    if body is None:
        return fmt
    settings = get_settings()
    result = logs.ingest_logs(get_store(), body, fmt, max_future=settings.max_future_skew,
                              max_records=settings.max_spans)
    return Response(logs.encode_logs_response(result.rejected_records, result.error_message(), fmt),
                    status=200, mimetype=wire.RESPONSE_MEDIA_TYPE[fmt])


@blueprint.post("/v1/metrics")
def export_metrics():
    fmt, body = _read_body()
    if body is None:
        return fmt
    metrics.accept_metrics(body, fmt)
    return Response(metrics.encode_metrics_response(fmt), status=200, mimetype=wire.RESPONSE_MEDIA_TYPE[fmt])


def _summary(result) -> dict:
    """What `obsctl ingest --format otlp-json --url` needs to print the summary it prints locally."""
    return {"spans": result.spans, "stored": result.stored, "duplicates": result.duplicates,
            "sessions": sorted(result.sessions),
            "rejected": [{"span": label, "error": why} for label, why in result.rejected]}


_BINARY = {"schema": {"type": "string", "format": "binary"}}

OPENAPI_MODELS = (OtlpExportRequest, OtlpExportResponse, OtlpLogsExportRequest, OtlpLogsExportResponse)

_TRACES_DESCRIPTION = (
    "Ingest OpenTelemetry traces (OTLP/HTTP); each span becomes an event, idempotent on "
    "(trace id, span id). Content-Encoding gzip accepted; the body limit applies after "
    "decompression. At most OBSCTL_MAX_SPANS spans (default 10000) per request; 413 beyond")


def _traces_operation(description: str) -> dict:
    return {
        "post": operation(
            "otlp",
            description,
            params=[
                query_param("summary", {"type": "boolean", "default": False},
                            "JSON only: add obsctl's own account of the request (spans stored, "
                            "duplicates, sessions, each rejected span) under the key obsctl"),
                int_query_param(FIRST_INDEX, "JSON only: number resourceSpans from this index in "
                                "rejection messages (a client sending a large document a part at a time)"),
            ],
            request={"content": {"application/x-protobuf": _BINARY,
                                 "application/json": {"schema": ref(OtlpExportRequest)}}},
            ok={"description": "Accepted (spans that could not be used are in partialSuccess), "
                               "in the request's content type",
                "content": {"application/x-protobuf": _BINARY,
                            "application/json": {"schema": ref(OtlpExportResponse)}}},
            errors=error_responses(400, 413, 415, 503),
            extra_responses=STORAGE_FULL,
        )
    }


OPENAPI_PATHS = {
    "/v1/traces": _traces_operation(_TRACES_DESCRIPTION),
    LANGFUSE_TRACES: _traces_operation(
        "/v1/traces at the path the Langfuse SDKs export to (LANGFUSE_HOST set to obsctl's URL); "
        "they authenticate with HTTP Basic, whose password (the Langfuse secret key) must be the "
        "API key. " + _TRACES_DESCRIPTION),
    "/v1/metrics": {
        "post": operation(
            "otlp",
            "Accept OpenTelemetry metrics (OTLP/HTTP) and drop them: obsctl computes its figures "
            "from the stored events. Answered with success so that exporters sending metrics next "
            "to traces (Traceloop's) do not log failures; a body that is not an "
            "ExportMetricsServiceRequest is a 400",
            request={"content": {"application/x-protobuf": _BINARY,
                                 "application/json": {"schema": {"type": "object"}}}},
            ok={"description": "Accepted and dropped: an empty ExportMetricsServiceResponse in the "
                               "request's content type",
                "content": {"application/x-protobuf": _BINARY,
                            "application/json": {"schema": {"type": "object"}}}},
            errors=error_responses(400, 413, 415),
        )
    },
    "/v1/logs": {
        "post": operation(
            "otlp",
            "Ingest OpenTelemetry logs (OTLP/HTTP): GenAI events (gen_ai.user.message, gen_ai.choice, "
            "gen_ai.client.inference.operation.details, ...) become the input and output messages of "
            "their span's event, or events of the session when the span is not stored yet; other "
            "log records are ignored. Content-Encoding gzip accepted; the body limit applies after "
            "decompression. At most OBSCTL_MAX_SPANS log records (default 10000) per request; 413 beyond",
            request={"content": {"application/x-protobuf": _BINARY,
                                 "application/json": {"schema": ref(OtlpLogsExportRequest)}}},
            ok={"description": "Accepted (log records that could not be used are in partialSuccess), "
                               "in the request's content type",
                "content": {"application/x-protobuf": _BINARY,
                            "application/json": {"schema": ref(OtlpLogsExportResponse)}}},
            errors=error_responses(400, 413, 415, 503),
            extra_responses=STORAGE_FULL,
        )
    },
}
