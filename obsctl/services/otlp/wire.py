"""OTLP/HTTP wire format: decompression within a size limit, decoding of protobuf and OTLP
JSON export requests into plain span records, and encoding of the export response.

Both encodings decode to the same `SpanRecord`s, so the mapping to events never sees the
difference. A body whose structure cannot be read is an `InvalidInput` (HTTP 400); a span
that is readable as a whole but unusable (bad ids, bad times) becomes a `RejectedSpan`, which
the export response reports in `partial_success`.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from obsctl.errors import InvalidInput, PayloadTooLarge

PROTOBUF = "protobuf"
JSON = "json"
# Media type -> wire format. application/x-protobuf is what the OTLP spec and every
# official exporter send; application/protobuf is its registered spelling.
MEDIA_TYPES = {
    "application/x-protobuf": PROTOBUF,
    "application/protobuf": PROTOBUF,
    "application/json": JSON,
}
RESPONSE_MEDIA_TYPE = {PROTOBUF: "application/x-protobuf", JSON: "application/json"}
# Content-Encoding values we can undo; gzip is what exporters send when compression is on.
ENCODINGS = ("identity", "gzip", "x-gzip", "deflate")

# Nesting depth kept for attribute values (arrays and key-value lists); deeper levels become
# null so that no request can drive the converters or the JSON encoder into recursion limits.
MAX_VALUE_DEPTH = 16
# Times at or beyond year 10000 cannot be written as ISO 8601 text.
MAX_UNIX_NANO = 253_402_300_800 * 10**9


@dataclass(slots=True)
class SpanRecord:
    """One span, decoded: hex ids, integer nanosecond times, attributes as plain values."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict
    events: list  # [(name, attributes)]
    status_code: int
    status_message: str
    resource: dict  # shared by the spans of one resource
    scope: str | None
    # Span attributes over resource attributes: what the mapping reads (one lookup per key).
    lookup: dict = field(init=False, repr=False)

    def __post_init__(self):
        self.lookup = {**self.resource, **self.attributes} if self.resource else self.attributes


@dataclass(slots=True)
class RejectedSpan:
    """A span that could not be used, with where it was and why."""

    label: str
    message: str


def decompress(data: bytes, encoding: str, limit: int) -> bytes:
    """Undo `Content-Encoding`, never producing more than `limit` bytes.

    Decompression is incremental and stops as soon as the output passes the limit, so a
    small compressed "bomb" is refused without ever being expanded in memory.
    """
    if encoding in ("", "identity"):
        if len(data) > limit:
            raise PayloadTooLarge(f"request body too large; the limit is {limit} bytes")
        return data
    if encoding not in ENCODINGS:
        raise InvalidInput(f"unsupported Content-Encoding {encoding!r}")
    out = bytearray()
    pending = data
    try:
        while pending:
            # 32 + MAX_WBITS: accept both gzip and zlib headers ("deflate" in HTTP is zlib).
            inflater = zlib.decompressobj(32 + zlib.MAX_WBITS)
            chunk = pending
            while chunk:
                # Asking for one byte more than the room left: getting it means too large.
                out += inflater.decompress(chunk, limit + 1 - len(out))
                if len(out) > limit:
                    raise PayloadTooLarge(
                        f"request body too large after decompression; the limit is {limit} bytes"
                    )
                chunk = inflater.unconsumed_tail
            if not inflater.eof:
                raise InvalidInput(f"truncated {encoding} body")
            pending = inflater.unused_data  # a further gzip member, as `cat a.gz b.gz` makes
    except zlib.error as exc:
        raise InvalidInput(f"cannot decompress the {encoding} body: {exc}") from None
    return bytes(out)


def check_count(count: int, limit: int | None, what: str = "spans") -> None:
    """The cap on what one export request may hold (OBSCTL_MAX_SPANS in the server; None: no
    cap), checked before any item is converted: a 413 as for /events' batch limit."""
    if limit is not None and count > limit:
        raise PayloadTooLarge(f"request has {count} {what}; at most {limit} are accepted per request")


def count_json_items(document: Any, outer: str, middle: str, inner: str) -> int:
    """How many items `{outer: [{middle: [{inner: [...]}]}]}` holds (what is not shaped so counts
    nothing: the decoding refuses it later)."""
    count = 0
    tops = document.get(outer) if type(document) is dict else None
    for top in tops if type(tops) is list else ():
        middles = top.get(middle) if type(top) is dict else None
        for item in middles if type(middles) is list else ():
            items = item.get(inner) if type(item) is dict else None
            count += len(items) if type(items) is list else 0
    return count


# --- protobuf ---------------------------------------------------------------------------

def decode_protobuf(data: bytes, max_spans: int | None = None) -> list[SpanRecord | RejectedSpan]:
    """Decode a binary `ExportTraceServiceRequest` (an empty body is an empty request) of at
    most `max_spans` spans."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    try:
        request = ExportTraceServiceRequest.FromString(data)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise InvalidInput(f"cannot decode the protobuf body as an ExportTraceServiceRequest: "
                           f"{str(exc)[:200]}") from None
    if max_spans is not None:
        check_count(sum(len(scope.spans) for resource in request.resource_spans
                        for scope in resource.scope_spans), max_spans)
    spans: list[SpanRecord | RejectedSpan] = []
    for r_index, resource_spans in enumerate(request.resource_spans):
        resource = _pb_attributes(resource_spans.resource.attributes)
        for s_index, scope_spans in enumerate(resource_spans.scope_spans):
            scope = scope_spans.scope.name or None
            for index, span in enumerate(scope_spans.spans):
                spans.append(_pb_span(span, resource, scope, (r_index, s_index, index)))
    return spans


def _pb_span(span, resource: dict, scope: str | None, position: tuple) -> SpanRecord | RejectedSpan:
    trace_id = span.trace_id.hex()
    span_id = span.span_id.hex()
    if len(trace_id) != 32 or len(span_id) != 16 or trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        r_index, s_index, index = position
        return RejectedSpan(f"resourceSpans[{r_index}].scopeSpans[{s_index}].spans[{index}]",
                            id_problem(trace_id, 32, "trace id") or id_problem(span_id, 16, "span id")
                            or "invalid trace or span id")
    parent = span.parent_span_id.hex()
    if not parent or parent == _ZERO_SPAN:
        parent = None  # empty, or all zero as some exporters write a root's parent
    elif len(parent) != 16:
        if parent.count("0") == len(parent):
            parent = None
        else:
            return RejectedSpan(f"{trace_id}:{span_id}",
                                f"parent span id must be 8 bytes, got {len(parent) // 2}")
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if start == 0 or start >= MAX_UNIX_NANO or end >= MAX_UNIX_NANO:
        return RejectedSpan(f"{trace_id}:{span_id}", time_problem(start, end) or "invalid span times")
    events = [(e.name, _pb_attributes(e.attributes)) for e in span.events] if span.events else []
    status = span.status
    return SpanRecord(trace_id, span_id, parent, span.name, span.kind, start, end,
                      _pb_attributes(span.attributes), events, status.code, status.message,
                      resource, scope)


_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16
# AnyValue kinds read as they are; the others need _pb_value.
_SCALAR_KINDS = frozenset({"string_value", "int_value", "double_value", "bool_value"})


def _pb_attributes(key_values) -> dict:
    attributes = {}
    for kv in key_values:
        value = kv.value
        kind = value.WhichOneof("value")
        attributes[kv.key] = getattr(value, kind) if kind in _SCALAR_KINDS else _pb_value(value, 0)
    return attributes


def _pb_value(value, depth: int) -> Any:
    kind = value.WhichOneof("value")
    if kind in _SCALAR_KINDS:
        return getattr(value, kind)
    if kind is None or depth >= MAX_VALUE_DEPTH:
        return None
    if kind == "array_value":
        return [_pb_value(v, depth + 1) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _pb_value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    return base64.b64encode(value.bytes_value).decode()


# --- shared checks and the response ----------------------------------------------------

def id_problem(hex_id: str, digits: int, what: str) -> str | None:
    if len(hex_id) != digits:
        return f"{what} must be {digits // 2} bytes, got {len(hex_id) // 2}"
    if hex_id.count("0") == digits:
        return f"{what} must not be all zero"
    return None


def time_problem(start: int, end: int) -> str | None:
    if start == 0:
        return "startTimeUnixNano is missing"
    if start >= MAX_UNIX_NANO or end >= MAX_UNIX_NANO:
        return "span times must be before the year 10000"
    return None


def encode_response(rejected_spans: int, error_message: str, fmt: str, extra: dict | None = None) -> bytes:
    """An `ExportTraceServiceResponse`; partial_success is set only when spans were rejected.
    `extra` adds keys to a JSON answer (obsctl's own summary, asked for with ?summary=true)."""
    partial = rejected_spans > 0 or bool(error_message)
    if fmt == PROTOBUF:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        response = ExportTraceServiceResponse()
        if partial:
            response.partial_success.rejected_spans = rejected_spans
            response.partial_success.error_message = error_message
        return response.SerializeToString()
    answer = {}
    if partial:
        # int64 fields are decimal strings in the protobuf JSON mapping that OTLP JSON follows.
        answer["partialSuccess"] = {"rejectedSpans": str(rejected_spans), "errorMessage": error_message}
    return orjson.dumps({**answer, **(extra or {})})
