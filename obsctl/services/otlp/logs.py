"""OTLP log ingest: the GenAI events of the OpenTelemetry semantic conventions, which carry an
LLM call's prompts and completions as log records linked to the call's span by trace and span id.

Read (the event name is the log record's `event_name`, else its `event.name` attribute):

- `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
  `gen_ai.tool.message`: one input message each, the body (`{"content": ..., "tool_calls": ...,
  "id": ...}`) with the role the event name gives when the body has none;
- `gen_ai.choice`: one output message, the body's `message` with its `finish_reason` and `index`;
- `gen_ai.client.inference.operation.details`: input and output messages and system instructions
  from its `gen_ai.input.messages`, `gen_ai.output.messages` and `gen_ai.system_instructions`;
- any other `gen_ai.*` event is kept in the span event's metadata (`gen_ai_events`);
  `gen_ai.evaluation.result` is also a score of the session (services/otlp/evaluations.py).
  Log records that are not GenAI events are ignored (not rejected).

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

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import orjson

import obsctl.services.otlp.wire as wire
from obsctl.services.ingest import (
    DEFAULT_MAX_FUTURE_SKEW,
    MAX_ID_LEN,
    prepare_batch,
    store_prepared,
    validate_events,
)
from obsctl.services.otlp.evaluations import EVALUATION_EVENT, evaluation_score
from obsctl.services.otlp.log_records import (
    Content,
    LogRecord,
    content_of,
    content_of_event,
    decode_logs,
    merge_contents,
)
from obsctl.services.otlp.mapping import (
    explicit_agent,
    explicit_session,
    ns_to_iso,
    service_name,
)
from obsctl.store import Store

MAX_NAMED_REJECTIONS = 5


@dataclass
class LogsResult:
    records: int = 0
    attached: int = 0  # added to the event of their span
    stored: int = 0  # stored as events of their own
    duplicates: int = 0
    ignored: int = 0  # not GenAI events
    scores: int = 0  # evaluation results given to their sessions as scores
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
        if isinstance(item, wire.RejectedSpan):
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
    attached, stored, rejected, scores = outcome
    result.attached = attached
    result.scores = scores
    result.stored = stored.stored if stored else 0
    result.duplicates = stored.duplicates if stored else 0
    result.sessions = stored.sessions if stored else set()
    result.rejected.extend(rejected)
    return result


def _store_logs(store: Store, items: list[tuple[LogRecord, Content]], trace_ids: list[str],
                span_events: list[str], max_future):
    """In one transaction: add the records of stored spans to their events, store the others
    as events of their own, and give evaluation results to their sessions as scores. Returns
    (records attached, the store's answer, rejections, scores given)."""
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
        raw, labels, own_keys = [], [], []
        own_sessions: dict[str, str] = {}
        for record, content in own:
            event = _own_event(record, content, remembered)
            if event is None:
                rejected.append((f"log record {content.key}", "no trace id and no session id "
                                 "(session.id, gen_ai.conversation.id, ...)"))
                continue
            raw.append(event)
            labels.append(event["event_id"])
            own_keys.append(content.key)
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
                own_sessions = {v.row.event_id: v.row.session_id for v in valid}
        scores = _evaluation_scores(items, existing, {key: own_sessions.get(event_id)
                                                      for key, event_id in zip(own_keys, labels)})
        if scores:
            store.sessions.insert_scores_once(scores)
    return attached, stored, rejected, len(scores)


def _evaluation_scores(items: list[tuple[LogRecord, Content]], existing: dict,
                       own: dict[str, str | None]) -> list[dict]:
    """The scores of the request's evaluation results, each in the session of the span it judged
    (its stored event's, or the session its own event was stored in)."""
    scores = []
    for record, content in items:
        if content.name != EVALUATION_EVENT:
            continue
        span_event = existing.get(f"{record.trace_id}:{record.span_id}") if record.span_id else None
        session_id = span_event[3] if span_event is not None else own.get(content.key)
        score = evaluation_score(record, content.key, session_id) if session_id else None
        if score is not None:
            scores.append(score)
    return scores


def _attach(store: Store, existing: dict, attach: dict[str, list[Content]]) -> int:
    """Add contents to the stored events of their spans; the number of records added."""
    updates = []
    count = 0
    for event_id, contents in attach.items():
        input_data, output_data, metadata, _ = existing[event_id]
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
