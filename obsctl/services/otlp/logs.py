"""OTLP log ingest: the GenAI events of the OpenTelemetry semantic conventions, which carry an
LLM call's prompts and completions as log records linked to the call's span by trace and span id.

Read (the event name is the log record's `event_name`, else its `event.name` attribute):

- `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
  `gen_ai.tool.message`: one input message each, the body (`{"content": ..., "tool_calls": ...,
  "id": ...}`) with the role the event name gives when the body has none;
- `gen_ai.choice`: one output message, the body's `message` with its `finish_reason` and `index`;
- `gen_ai.client.inference.operation.details`: input and output messages and system instructions
  from its `gen_ai.input.messages`, `gen_ai.output.messages` and `gen_ai.system_instructions`;
- any other `gen_ai.*` event (e.g. `gen_ai.evaluation.result`) is kept in the span event's
  metadata (`gen_ai_events`). Log records that are not GenAI events are ignored (not rejected).

Where a record goes:

- its span's event is stored: the messages are appended to the event's
  `input_data.messages` / `output_data.messages` (system instructions to
  `input_data.system_instructions`), in record time order within a request. Each record's key
  (a hash of its content) goes to the event's `metadata.log_records`, so an exporter's retry
  adds nothing twice;
- the span is not stored (yet): the record becomes an event of its own (`event_type` generic,
  `event_id` `<trace id>:<span id>:<key>`, `parent_id` the span's event id) in the session of
  its trace (as spans find it), so nothing is lost when the span never comes. When the span
  arrives later, the messages of these events are copied into the span's event as above; the
  record events stay, as children of the span. Spans stored under the trace id that move into
  a named session take these events along (their ids start with the trace id).
- a record without a span id but with a trace id is an event `<trace id>:log:<key>`; one with
  neither needs a session attribute (`session.id`, `gen_ai.conversation.id`, ...) and is an
  event `log:<key>`; without one it is rejected.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import orjson

import obsctl.services.otlp.json_format as jf
import obsctl.services.otlp.wire as wire
from obsctl.errors import InvalidInput
from obsctl.services.ingest import (
    DEFAULT_MAX_FUTURE_SKEW,
    MAX_ID_LEN,
    prepare_batch,
    store_prepared,
    validate_events,
)
from obsctl.services.otlp.mapping import (
    _parse_json,
    explicit_agent,
    explicit_session,
    ns_to_iso,
    service_name,
)
from obsctl.store import Store

INPUT_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
MAX_NAMED_REJECTIONS = 5


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


@dataclass
class LogsResult:
    records: int = 0
    attached: int = 0  # added to the event of their span
    stored: int = 0  # stored as events of their own
    duplicates: int = 0
    ignored: int = 0  # not GenAI events
    rejected: list[tuple[str, str]] = field(default_factory=list)
    sessions: set[str] = field(default_factory=set)

    @property
    def rejected_records(self) -> int:
        return len(self.rejected)

    def error_message(self) -> str:
        if not self.rejected:
            return ""
        named = "; ".join(f"{label}: {why}" for label, why in self.rejected[:MAX_NAMED_REJECTIONS])
        more = len(self.rejected) - MAX_NAMED_REJECTIONS
        noun = "log record" if len(self.rejected) == 1 else "log records"
        return f"{len(self.rejected)} {noun} rejected: {named}" + (f"; and {more} more" if more > 0 else "")


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
    name = record.get("eventName")
    return _record(where, trace_id, span_id, times[0], times[1], name if type(name) is str else "",
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
    body = _parse_json(record.body)
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
            content.system_instructions = _parse_json(attrs["gen_ai.system_instructions"])
    else:
        other = {"name": name, "attributes": record.attributes}
        if body is not None:
            other["body"] = body
        content.other = other
    return content


def _messages(value: Any) -> list:
    value = _parse_json(value)
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


# --- ingest -----------------------------------------------------------------------------

def ingest_logs(store: Store, body: bytes, fmt: str, *,
                max_future: timedelta | None = DEFAULT_MAX_FUTURE_SKEW,
                max_records: int | None = None) -> LogsResult:
    """Ingest one OTLP logs export request body (protobuf or JSON, already decompressed); a
    request of more than `max_records` log records is refused whole (PayloadTooLarge)."""
    decoded = decode_logs(body, fmt, max_records)
    result = LogsResult(records=len(decoded))
    items: list[tuple[LogRecord, Content]] = []
    for item in decoded:
        if type(item) is wire.RejectedSpan:
            result.rejected.append((item.label, item.message))
            continue
        content = content_of(item)
        if content is None:
            result.ignored += 1
        else:
            items.append((item, content))
    if not items:
        return result
    items.sort(key=lambda pair: pair[0].time_ns)
    trace_ids = list(dict.fromkeys(r.trace_id for r, _ in items if r.trace_id))
    span_events = list(dict.fromkeys(f"{r.trace_id}:{r.span_id}" for r, _ in items if r.span_id))
    outcome = store.run_write(lambda uow: _store_logs(uow, items, trace_ids, span_events, max_future))
    attached, stored, rejected = outcome
    result.attached = attached
    result.stored = stored.stored if stored else 0
    result.duplicates = stored.duplicates if stored else 0
    result.sessions = stored.sessions if stored else set()
    result.rejected.extend(rejected)
    return result


def _store_logs(store: Store, items: list[tuple[LogRecord, Content]], trace_ids: list[str],
                span_events: list[str], max_future):
    """In one transaction: add the records of stored spans to their events, store the others
    as events of their own. Returns (records attached, the store's answer, rejections)."""
    with store.transaction():
        existing = store.otlp.event_contents(span_events) if span_events else {}
        remembered = store.otlp.trace_sessions(trace_ids) if trace_ids else {}
        attach: dict[str, list[Content]] = {}
        own: list[tuple[LogRecord, Content]] = []
        for record, content in items:
            span_event = f"{record.trace_id}:{record.span_id}" if record.span_id else None
            if span_event in existing:
                attach.setdefault(span_event, []).append(content)
            else:
                own.append((record, content))
        attached = _attach(store, existing, attach)
        rejected: list[tuple[str, str]] = []
        raw, labels = [], []
        for record, content in own:
            event = _own_event(record, content, remembered)
            if event is None:
                rejected.append((f"log record {content.key}", "no trace id and no session id "
                                 "(session.id, gen_ai.conversation.id, ...)"))
                continue
            raw.append(event)
            labels.append(event["event_id"])
        stored = None
        if raw:
            valid, errors = validate_events(raw, max_future=max_future)
            by_index: dict[int, list[str]] = {}
            for e in errors:
                by_index.setdefault(e["index"], []).append(
                    f"{e['field']} {e['message']}" if e["field"] else e["message"])
            rejected.extend((labels[i], "; ".join(m)) for i, m in by_index.items())
            if valid:
                stored = store_prepared(store, valid, prepare_batch(store, valid))
    return attached, stored, rejected


def _attach(store: Store, existing: dict, attach: dict[str, list[Content]]) -> int:
    """Add contents to the stored events of their spans; the number of records added."""
    updates = []
    count = 0
    for event_id, contents in attach.items():
        input_data, output_data, metadata = existing[event_id]
        before = len((metadata or {}).get("log_records") or [])
        input_data, output_data, metadata, changed = merge_contents(input_data, output_data, metadata,
                                                                    contents)
        if changed:
            count += len(metadata["log_records"]) - before
            updates.append((_dumps(input_data), _dumps(output_data), _dumps(metadata), event_id))
    if updates:
        store.otlp.set_event_contents(updates)
    return count


def _dumps(value: dict | None) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


def _own_event(record: LogRecord, content: Content, remembered: dict[str, str]) -> dict | None:
    """The event a record becomes when its span is not stored; None without any session."""
    session_id = explicit_session(record)  # the mapping's readers use .lookup only
    if session_id is None or len(session_id) > MAX_ID_LEN:
        session_id = remembered.get(record.trace_id) if record.trace_id else None
        session_id = session_id or record.trace_id
    if session_id is None:
        return None
    if record.span_id:
        event_id = f"{record.trace_id}:{record.span_id}:{content.key}"
    elif record.trace_id:
        event_id = f"{record.trace_id}:log:{content.key}"
    else:
        event_id = f"log:{content.key}"
    # The record's own time: it orders the messages copied into the span's event later
    # (timestamps keep milliseconds only).
    metadata: dict[str, Any] = {"log_event": content.name, "log_record": content.key,
                                "time_unix_nano": record.time_ns}
    if record.trace_id:
        metadata["trace_id"] = record.trace_id
    if record.span_id:
        metadata["span_id"] = record.span_id
    if record.scope:
        metadata["scope"] = record.scope
    kept = {k: v for k, v in record.attributes.items()
            if k not in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")}
    if kept:
        metadata["attributes"] = kept
    if content.other is not None:
        metadata["gen_ai_event"] = content.other
    event: dict[str, Any] = {
        "event_id": event_id,
        "session_id": session_id,
        "event_type": "generic",
        "timestamp": ns_to_iso(record.time_ns),
        "metadata": metadata,
    }
    if record.span_id:
        event["parent_id"] = f"{record.trace_id}:{record.span_id}"
    agent = explicit_agent(record) or service_name(record)
    if agent is not None:
        event["agent_name"] = agent
    if content.input or content.system_instructions is not None:
        event["input_data"] = {}
        if content.input:
            event["input_data"]["messages"] = content.input
        if content.system_instructions is not None:
            event["input_data"]["system_instructions"] = content.system_instructions
    if content.output:
        event["output_data"] = {"messages": content.output}
    return event


def attach_pending_logs(store: Store, span_event_ids: Sequence[str]) -> None:
    """Copy the messages of record events stored before their span into the span's event.

    Runs in the trace ingest's transaction, after the spans are stored; the record events are
    found by their ids (`<span event id>:<key>`), so a request whose spans have none costs one
    index lookup per span.
    """
    pending = store.otlp.span_log_events(span_event_ids)
    if not pending:
        return
    existing = store.otlp.event_contents(list(pending))
    attach = {}
    for span_event, rows in pending.items():
        if span_event not in existing:
            continue
        # Ordered by the records' own times (each row's metadata has it).
        attach[span_event] = [content_of_event(event_id, input_data, output_data, metadata, 0)
                              for event_id, input_data, output_data, metadata in rows]
    _attach(store, existing, attach)


def encode_logs_response(rejected: int, error_message: str, fmt: str) -> bytes:
    """An `ExportLogsServiceResponse`; partial_success only when records were rejected."""
    partial = rejected > 0 or bool(error_message)
    if fmt == wire.PROTOBUF:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

        response = ExportLogsServiceResponse()
        if partial:
            response.partial_success.rejected_log_records = rejected
            response.partial_success.error_message = error_message
        return response.SerializeToString()
    if not partial:
        return b"{}"
    return orjson.dumps({"partialSuccess": {"rejectedLogRecords": str(rejected),
                                            "errorMessage": error_message}})
