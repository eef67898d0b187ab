"""`POST /v1/traces`: OpenTelemetry OTLP/HTTP trace export (protobuf or JSON, gzip)."""

from flask import Blueprint, Response, request

from obsctl.models.otlp import OtlpExportRequest, OtlpExportResponse
from obsctl.params import IntParam
from obsctl.services.otlp import ingest_otlp, wire
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


@blueprint.post("/v1/traces")
def export_traces():
    fmt = wire.MEDIA_TYPES.get(request.mimetype)
    if fmt is None:
        return json_response(error_body(
            f"unsupported Content-Type {request.mimetype or '(none)'!r}; "
            f"send application/x-protobuf or application/json"), 415)
    encoding = (request.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding not in wire.ENCODINGS:
        return json_response(error_body(
            f"unsupported Content-Encoding {encoding!r}; send gzip, deflate or identity"), 415)
    # MAX_CONTENT_LENGTH bounds the compressed body; decompress() bounds what it expands to.
    body = wire.decompress(request.get_data(cache=False), encoding, get_settings().max_body_bytes)
    summary = bool_arg("summary") and fmt == wire.JSON
    first_index = FIRST_INDEX.check(int_arg("first_index"))
    result = ingest_otlp(get_store(), body, fmt, max_future=get_settings().max_future_skew,
                         first_index=first_index)
    extra = {"obsctl": _summary(result)} if summary else None
    return Response(wire.encode_response(result.rejected_spans, result.error_message(), fmt, extra),
                    status=200, mimetype=wire.RESPONSE_MEDIA_TYPE[fmt])


def _summary(result) -> dict:
    """What `obsctl ingest --format otlp-json --url` needs to print the summary it prints locally."""
    return {"spans": result.spans, "stored": result.stored, "duplicates": result.duplicates,
            "sessions": sorted(result.sessions),
            "rejected": [{"span": label, "error": why} for label, why in result.rejected]}


_BINARY = {"schema": {"type": "string", "format": "binary"}}

OPENAPI_MODELS = (OtlpExportRequest, OtlpExportResponse)

OPENAPI_PATHS = {
    "/v1/traces": {
        "post": operation(
            "otlp",
            "Ingest OpenTelemetry traces (OTLP/HTTP); each span becomes an event, idempotent on "
            "(trace id, span id). Content-Encoding gzip accepted; the body limit applies after "
            "decompression",
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
}
