"""Decoding of OTLP JSON export requests (the OTLP JSON encoding of opentelemetry-proto):
lowerCamelCase field names, hex trace and span ids, integer enums, 64-bit integers as
decimal strings or numbers, unknown fields ignored.

Structure above the span level that cannot be read is an InvalidInput (HTTP 400), which is
also what the OpenAPI schema of the request promises; anything wrong inside a span makes
that span a RejectedSpan. Attribute values that are malformed become null.
"""

from __future__ import annotations

import base64
import binascii
from decimal import Decimal
from typing import Any

import orjson

from obsctl.errors import InvalidInput
from obsctl.services.otlp.wire import (
    MAX_VALUE_DEPTH,
    RejectedSpan,
    SpanRecord,
    check_count,
    count_json_items,
    time_problem,
)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# --- OTLP JSON --------------------------------------------------------------------------

def decode_json_body(data: bytes, first_index: int = 0,
                     max_spans: int | None = None) -> list[SpanRecord | RejectedSpan]:
    """Decode an OTLP JSON `ExportTraceServiceRequest` body of at most `max_spans` spans
    (`first_index`: see decode_json_request)."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"malformed JSON in request body: {exc}") from None
    if max_spans is not None:
        check_count(count_json_items(document, "resourceSpans", "scopeSpans", "spans"), max_spans)
    return decode_json_request(document, first_index)


def decode_json_request(document: Any, first_index: int = 0) -> list[SpanRecord | RejectedSpan]:
    """Decode a parsed OTLP JSON request: `{"resourceSpans": [...]}`.

    Problems are located as `resourceSpans[N]...`, counting from `first_index`: a client that
    sends the elements of one large document a few at a time keeps the document's numbering.

    Field names are the lowerCamelCase ones of the OTLP JSON encoding; unknown fields are
    ignored. A wrong structure above the span level is an InvalidInput.
    """
    if type(document) is not dict:
        raise InvalidInput('an OTLP JSON request must be an object: {"resourceSpans": [...]}')
    spans: list[SpanRecord | RejectedSpan] = []
    for index, item in enumerate(_list(document, "resourceSpans", ""), start=first_index):
        spans.extend(decode_json_resource_spans(item, f"resourceSpans[{index}]"))
    return spans


def decode_json_resource_spans(item: Any, where: str) -> list[SpanRecord | RejectedSpan]:
    """Decode one element of `resourceSpans` (also used when streaming a large file)."""
    if type(item) is not dict:
        raise InvalidInput(f"{where} must be an object")
    resource_obj = item.get("resource")
    if resource_obj is not None and type(resource_obj) is not dict:
        raise InvalidInput(f"{where}.resource must be an object")
    resource = _json_attributes(resource_obj or {}, f"{where}.resource")
    spans: list[SpanRecord | RejectedSpan] = []
    for s_index, scope_spans in enumerate(_list(item, "scopeSpans", where)):
        here = f"{where}.scopeSpans[{s_index}]"
        if type(scope_spans) is not dict:
            raise InvalidInput(f"{here} must be an object")
        scope_obj = scope_spans.get("scope")
        if scope_obj is not None and type(scope_obj) is not dict:
            raise InvalidInput(f"{here}.scope must be an object")
        scope_name = (scope_obj or {}).get("name")
        scope = scope_name if type(scope_name) is str and scope_name else None
        for index, span in enumerate(_list(scope_spans, "spans", here)):
            if type(span) is not dict:
                raise InvalidInput(f"{here}.spans[{index}] must be an object")
            spans.append(_json_span(span, resource, scope, f"{here}.spans[{index}]"))
    return spans


def _list(obj: dict, key: str, where: str) -> list:
    value = obj.get(key)
    if value is None:
        return []
    if type(value) is not list:
        raise InvalidInput(f"{where + '.' if where else ''}{key} must be an array")
    return value


def _json_attributes(obj: dict, where: str) -> dict:
    """Attributes of a resource: a malformed list is a structural error (400)."""
    attributes = _list(obj, "attributes", where)
    result = {}
    for index, kv in enumerate(attributes):
        if type(kv) is not dict or type(kv.get("key")) is not str:
            raise InvalidInput(f"{where}.attributes[{index}] must be an object with a string key")
        result[kv["key"]] = _json_value(kv.get("value"), 0)
    return result


class _SpanProblem(Exception):
    pass


def _json_span(span: dict, resource: dict, scope: str | None, where: str) -> SpanRecord | RejectedSpan:
    trace_id = _json_id(span.get("traceId"), 16)
    span_id = _json_id(span.get("spanId"), 8)
    label = f"{trace_id}:{span_id}" if trace_id and span_id else where
    try:
        if trace_id is None:
            raise _SpanProblem("traceId must be 32 hex digits, not all zero")
        if span_id is None:
            raise _SpanProblem("spanId must be 16 hex digits, not all zero")
        parent_raw = span.get("parentSpanId")
        parent = None
        if parent_raw not in (None, "", "0" * 16):
            parent = _json_id(parent_raw, 8)
            if parent is None:
                raise _SpanProblem("parentSpanId must be 16 hex digits")
        start = _json_uint64(span.get("startTimeUnixNano"), "startTimeUnixNano")
        end_raw = span.get("endTimeUnixNano")
        end = 0 if end_raw is None else _json_uint64(end_raw, "endTimeUnixNano")  # 0: no duration
        problem = time_problem(start, end)
        if problem:
            raise _SpanProblem(problem)
        status = span.get("status")
        if status is None:
            status = {}
        elif type(status) is not dict:
            raise _SpanProblem("status must be an object")
        events = []
        for event in _span_list(span, "events"):
            if type(event) is not dict:
                raise _SpanProblem("events must be objects")
            name = event.get("name")
            events.append((name if type(name) is str else "", _span_attributes(event)))
        name = span.get("name")
        message = status.get("message")
        return SpanRecord(
            trace_id, span_id, parent, name if type(name) is str else "",
            _json_enum(span.get("kind"), _SPAN_KINDS), start, end, _span_attributes(span),
            events, _json_enum(status.get("code"), _STATUS_CODES),
            message if type(message) is str else "", resource, scope,
        )
    except _SpanProblem as exc:
        return RejectedSpan(label, str(exc))


def _span_list(obj: dict, key: str) -> list:
    value = obj.get(key)
    if value is None:
        return []
    if type(value) is not list:
        raise _SpanProblem(f"{key} must be an array")
    return value


def _span_attributes(obj: dict) -> dict:
    result = {}
    for kv in _span_list(obj, "attributes"):
        if type(kv) is not dict or type(kv.get("key")) is not str:
            raise _SpanProblem("attributes must be objects with a string key")
        result[kv["key"]] = _json_value(kv.get("value"), 0)
    return result


# Enum names are accepted too, although OTLP JSON sends integers.
_SPAN_KINDS = {"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
               "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}
_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def _json_enum(value: Any, names: dict) -> int:
    if type(value) is int:
        return value if 0 <= value < 2**31 else 0
    if type(value) is str:
        return names.get(value, 0)
    return 0


def _json_id(value: Any, size: int) -> str | None:
    """A trace or span id: hex in OTLP JSON (base64, the protobuf JSON form, is accepted)."""
    if type(value) is not str:
        return None
    if len(value) == size * 2:
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = None
    else:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = None
        if raw is not None and len(raw) != size:
            raw = None
    if raw is None or not any(raw):
        return None
    return raw.hex()


def _json_uint64(value: Any, name: str) -> int:
    """A 64-bit integer as OTLP JSON sends it: a decimal string or a number."""
    if type(value) is int:
        result = value
    elif type(value) is str and value.isdigit():
        result = int(value)
    elif value is None:
        raise _SpanProblem(f"{name} is missing")
    else:
        raise _SpanProblem(f"{name} must be an integer (string or number)")
    if not 0 <= result <= 2**64 - 1:
        raise _SpanProblem(f"{name} is out of range")
    return result


def _json_value(value: Any, depth: int) -> Any:
    """An AnyValue of OTLP JSON as a plain value; malformed values become null."""
    if type(value) is not dict or not value:
        return None
    if "stringValue" in value:
        text = value["stringValue"]
        return text if type(text) is str else None
    if "intValue" in value:
        return _json_int(value["intValue"])
    if "doubleValue" in value:
        return _json_double(value["doubleValue"])
    if "boolValue" in value:
        flag = value["boolValue"]
        return flag if type(flag) is bool else None
    if depth >= MAX_VALUE_DEPTH:
        return None
    if "arrayValue" in value:
        inner = value["arrayValue"]
        items = inner.get("values") if type(inner) is dict else None
        return [_json_value(v, depth + 1) for v in items] if type(items) is list else []
    if "kvlistValue" in value:
        inner = value["kvlistValue"]
        items = inner.get("values") if type(inner) is dict else None
        if type(items) is not list:
            return {}
        return {kv["key"]: _json_value(kv.get("value"), depth + 1) for kv in items
                if type(kv) is dict and type(kv.get("key")) is str}
    if "bytesValue" in value:
        data = value["bytesValue"]
        return data if type(data) is str else None
    return None


def _json_int(value: Any) -> int | None:
    if type(value) is int:
        number = value
    elif type(value) is str:
        try:
            number = int(value)
        except ValueError:
            return None
    elif type(value) is Decimal and value == value.to_integral_value():
        number = int(value)
    else:
        return None
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _json_double(value: Any) -> float | None:
    if type(value) in (int, float, Decimal):
        return float(value)
    if type(value) is str:
        try:
            return float(value)  # proto3 JSON writes "NaN", "Infinity", "-Infinity"
        except ValueError:
            return None
    return None
