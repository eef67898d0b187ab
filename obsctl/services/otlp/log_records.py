"""OTLP log records of the GenAI semantic conventions, decoded (protobuf or JSON) and read
into what each adds to its LLM call (`Content`); services/otlp/logs.py stores them (its
docstring says what is read and where it goes)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

import obsctl.services.otlp.json_format as jf
import obsctl.services.otlp.wire as wire
from obsctl.errors import InvalidInput
from obsctl.services.otlp.attributes import parse_json

INPUT_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"


@dataclass(slots=True)
class LogRecord:
    """One log record, decoded: hex ids (None when absent), the time, the event name, the body
    and attributes as plain values."""

    trace_id: str | None
    span_id: str | None
    time_ns: int
    event_name: str
    body: Any
    attributes: dict
    resource: dict
    scope: str | None
    lookup: dict = field(init=False, repr=False)

    def __post_init__(self):
        self.lookup = {**self.resource, **self.attributes} if self.resource else self.attributes


@dataclass
class Content:
    """What one GenAI event adds to its LLM call."""

    key: str
    time_ns: int
    name: str
    input: list = field(default_factory=list)
    output: list = field(default_factory=list)
    system_instructions: Any = None
    other: dict | None = None


# --- decoding ---------------------------------------------------------------------------

def decode_logs(body: bytes, fmt: str, max_records: int | None = None) -> list[LogRecord | wire.RejectedSpan]:
    """Decode an ExportLogsServiceRequest body (protobuf or OTLP JSON, already decompressed)
    of at most `max_records` log records."""
    if fmt == wire.PROTOBUF:
        return _decode_protobuf(body, max_records)
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"malformed JSON in request body: {exc}") from None
    if max_records is not None:
        wire.check_count(wire.count_json_items(document, "resourceLogs", "scopeLogs", "logRecords"),
                         max_records, "log records")
    return decode_json_logs(document)


def _decode_protobuf(data: bytes, max_records: int | None = None) -> list[LogRecord | wire.RejectedSpan]:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    try:
        request = ExportLogsServiceRequest.FromString(data)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise InvalidInput(f"cannot decode the protobuf body as an ExportLogsServiceRequest: "
                           f"{str(exc)[:200]}") from None
    if max_records is not None:
        wire.check_count(sum(len(scope.log_records) for resource in request.resource_logs
                             for scope in resource.scope_logs), max_records, "log records")
    records: list[LogRecord | wire.RejectedSpan] = []
    for r_index, resource_logs in enumerate(request.resource_logs):
        resource = wire._pb_attributes(resource_logs.resource.attributes)
        for s_index, scope_logs in enumerate(resource_logs.scope_logs):
            scope = scope_logs.scope.name or None
            for index, record in enumerate(scope_logs.log_records):
                where = f"resourceLogs[{r_index}].scopeLogs[{s_index}].logRecords[{index}]"
                body = (wire._pb_value(record.body, 0)
                        if record.HasField("body") else None)
                records.append(_record(
                    where, record.trace_id.hex(), record.span_id.hex(), record.time_unix_nano,
                    record.observed_time_unix_nano, record.event_name,
                    wire._pb_attributes(record.attributes), body, resource, scope))
    return records


def decode_json_logs(document: Any) -> list[LogRecord | wire.RejectedSpan]:
    """Decode an OTLP JSON `{"resourceLogs": [...]}`; a wrong structure above the record is 400."""
    if type(document) is not dict:
        raise InvalidInput('an OTLP JSON logs request must be an object: {"resourceLogs": [...]}')
    records: list[LogRecord | wire.RejectedSpan] = []
    for r_index, item in enumerate(jf._list(document, "resourceLogs", "")):
        where = f"resourceLogs[{r_index}]"
        if type(item) is not dict:
            raise InvalidInput(f"{where} must be an object")
        resource_obj = item.get("resource")
        if resource_obj is not None and type(resource_obj) is not dict:
            raise InvalidInput(f"{where}.resource must be an object")
        resource = jf._json_attributes(resource_obj or {}, f"{where}.resource")
        for s_index, scope_logs in enumerate(jf._list(item, "scopeLogs", where)):
            here = f"{where}.scopeLogs[{s_index}]"
            if type(scope_logs) is not dict:
                raise InvalidInput(f"{here} must be an object")
            scope_obj = scope_logs.get("scope")
            if scope_obj is not None and type(scope_obj) is not dict:
                raise InvalidInput(f"{here}.scope must be an object")
            scope_name = (scope_obj or {}).get("name")
            scope = scope_name if type(scope_name) is str and scope_name else None
            for index, record in enumerate(jf._list(scope_logs, "logRecords", here)):
                at = f"{here}.logRecords[{index}]"
                if type(record) is not dict:
                    raise InvalidInput(f"{at} must be an object")
                records.append(_json_record(record, resource, scope, at))
    return records


def _json_record(record: dict, resource: dict, scope: str | None, where: str):
    try:
        attributes = jf._span_attributes(record)
        times = []
        for name in ("timeUnixNano", "observedTimeUnixNano"):
            raw = record.get(name)
            times.append(0 if raw is None else jf._json_uint64(raw, name))
    except jf._SpanProblem as exc:
        return wire.RejectedSpan(where, str(exc))
    trace_raw, span_raw = record.get("traceId"), record.get("spanId")
    trace_id = "" if trace_raw in (None, "") else (jf._json_id(trace_raw, 16) or "bad")
    span_id = "" if span_raw in (None, "") else (jf._json_id(span_raw, 8) or "bad")
    event_name = record.get("eventName")
    return _record(where, trace_id, span_id, times[0], times[1], event_name if type(event_name) is str else "",
                   attributes, jf._json_value(record.get("body"), 0), resource, scope)


def _record(where: str, trace_id: str, span_id: str, time_ns: int, observed_ns: int, event_name: str,
            attributes: dict, body: Any, resource: dict, scope: str | None):
    """A LogRecord, or a RejectedSpan naming `where` and the problem."""
    if trace_id and (len(trace_id) != 32 or trace_id.count("0") == 32):
        return wire.RejectedSpan(where, "traceId must be 16 bytes, not all zero")
    if span_id and (len(span_id) != 16 or span_id.count("0") == 16):
        span_id = ""  # an empty or zero span id: the record is not in a span
    time_ns = time_ns or observed_ns
    if not time_ns:
        return wire.RejectedSpan(where, "timeUnixNano and observedTimeUnixNano are missing")
    if time_ns >= wire.MAX_UNIX_NANO:
        return wire.RejectedSpan(where, "times must be before the year 10000")
    if not event_name:
        name = attributes.get("event.name")
        event_name = name if type(name) is str else ""
    return LogRecord(trace_id or None, span_id or None, time_ns, event_name, body, attributes,
                     resource, scope)


# --- what a record says ----------------------------------------------------------------

def content_of(record: LogRecord) -> Content | None:
    """The messages (or other GenAI data) of a record; None when it is not a GenAI event."""
    name = record.event_name
    if not name.startswith("gen_ai."):
        return None
    key = _key(record)
    content = Content(key=key, time_ns=record.time_ns, name=name)
    body = parse_json(record.body)
    if name in INPUT_EVENTS:
        message = dict(body) if type(body) is dict else ({"content": body} if body is not None else {})
        message.setdefault("role", INPUT_EVENTS[name])
        content.input.append(message)
    elif name == CHOICE_EVENT:
        choice = body if type(body) is dict else {"message": {"content": body}}
        inner = choice.get("message")
        message = dict(inner) if type(inner) is dict else {"content": inner}
        message.setdefault("role", "assistant")
        for extra in ("finish_reason", "index"):
            if choice.get(extra) is not None:
                message[extra] = choice[extra]
        content.output.append(message)
    elif name == DETAILS_EVENT:
        attrs = record.attributes
        content.input.extend(_messages(attrs.get("gen_ai.input.messages")))
        content.output.extend(_messages(attrs.get("gen_ai.output.messages")))
        if attrs.get("gen_ai.system_instructions") is not None:
            content.system_instructions = parse_json(attrs["gen_ai.system_instructions"])
    else:
        other = {"name": name, "attributes": record.attributes}
        if body is not None:
            other["body"] = body
        content.other = other
    return content


def _messages(value: Any) -> list:
    value = parse_json(value)
    if value is None:
        return []
    return value if type(value) is list else [value]


def _key(record: LogRecord) -> str:
    """The record's identity: the same record exported twice has the same key."""
    text = orjson.dumps([record.trace_id, record.span_id, record.time_ns, record.event_name,
                         record.body, record.attributes], option=orjson.OPT_SORT_KEYS,
                        default=str)
    return hashlib.sha256(text).hexdigest()[:16]


def merge_contents(input_data: dict | None, output_data: dict | None, metadata: dict | None,
                   contents: Sequence[Content]) -> tuple[dict | None, dict | None, dict, bool]:
    """The event's input, output and metadata with `contents` added (those whose key is not
    in metadata.log_records yet); the last item says whether anything changed."""
    metadata = dict(metadata or {})
    seen = list(metadata.get("log_records") or [])
    known = set(seen)
    changed = False
    for content in sorted(contents, key=lambda c: c.time_ns):
        if content.key in known:
            continue
        known.add(content.key)
        seen.append(content.key)
        changed = True
        whole = content.name == DETAILS_EVENT
        if content.input or content.system_instructions is not None:
            input_data = dict(input_data or {})
            if content.input:
                input_data["messages"] = _added(input_data.get("messages"), content.input, whole)
            if content.system_instructions is not None:
                input_data["system_instructions"] = content.system_instructions
        if content.output:
            output_data = dict(output_data or {})
            output_data["messages"] = _added(output_data.get("messages"), content.output, whole)
        if content.other is not None:
            metadata["gen_ai_events"] = _as_list(metadata.get("gen_ai_events")) + [content.other]
    metadata["log_records"] = seen
    return input_data, output_data, metadata, changed


def _added(messages: Any, new: list, whole: bool) -> list:
    """`messages` with `new` after them. `new` is a whole list (`whole`: an inference's details
    event) that the span may already hold, as `gen_ai.input.messages` / `gen_ai.output.messages`
    when an instrumentation records content on the span and on the event (SPAN_AND_EVENT): then
    it is there once. Single-message events are always added: a user may say "yes" twice."""
    messages = _as_list(messages)
    if whole and _holds_run(messages, new):
        return messages
    return messages + new


def _holds_run(messages: list, run: list) -> bool:
    size = len(run)
    return any(messages[i:i + size] == run for i in range(len(messages) - size + 1))


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if type(value) is list else [value]


def content_of_event(event_id: str, input_data: dict | None, output_data: dict | None,
                     metadata: dict | None, timestamp_ns: int) -> Content:
    """The Content a record's own event holds (to copy into its span's event later);
    `timestamp_ns` orders it when its metadata has no time."""
    metadata = metadata or {}
    key = metadata.get("log_record") or event_id.rsplit(":", 1)[-1]
    time_ns = metadata.get("time_unix_nano")
    content = Content(key=key, time_ns=time_ns if type(time_ns) is int else timestamp_ns,
                      name=metadata.get("log_event", ""))
    content.input = _as_list((input_data or {}).get("messages"))
    content.output = _as_list((output_data or {}).get("messages"))
    content.system_instructions = (input_data or {}).get("system_instructions")
    content.other = metadata.get("gen_ai_event")
    return content
