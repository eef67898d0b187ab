"""OTLP trace ingest: each span becomes one event, stored by the same ingest as POST /events
(the same validation, one transaction per export request, idempotent on the event id
`<trace id>:<span id>`, incrementally maintained session totals).

Sessions: a span's own session attribute wins; otherwise the session named by any span of
the same trace in the request; otherwise the session remembered for the trace from an
earlier request; otherwise the trace id. When a trace's session becomes known, the link is
remembered and the spans stored earlier under the trace id move into the session.

Token usage is counted once, on the spans that made the model calls (usage.py), and a failure
once, on the deepest span that failed (failures.py); a model call once, not the steps and
wrappers around it (calls.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import orjson

from obsctl.services.ingest import (
    DEFAULT_MAX_FUTURE_SKEW,
    MAX_ID_LEN,
    MAX_TEXT_LEN,
    ValidEvent,
    prepare_batch,
    store_prepared,
    validate_events,
)
from obsctl.services.otlp.calls import count_model_calls_once
from obsctl.services.otlp.decode import decode_request
from obsctl.services.otlp.failures import count_failures_once
from obsctl.services.otlp.langchain import tool_arguments
from obsctl.services.otlp.logs import attach_pending_logs
from obsctl.services.otlp.mapping import (
    explicit_session,
    is_run_span,
    service_name,
    session_agent,
    span_to_event,
)
from obsctl.services.otlp.usage import settle_usage, usage_traces
from obsctl.services.otlp.wire import RejectedSpan, SpanRecord
from obsctl.store import Store

# How many rejected spans are named in partial_success.error_message.
MAX_NAMED_REJECTIONS = 5


@dataclass
class OtlpResult:
    spans: int = 0
    stored: int = 0
    duplicates: int = 0
    moved: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (trace:span, why)
    sessions: set[str] = field(default_factory=set)

    @property
    def rejected_spans(self) -> int:
        return len(self.rejected)

    @property
    def used(self) -> int:
        """Spans that were valid (newly stored or already stored)."""
        return self.spans - len(self.rejected)

    def error_message(self) -> str:
        """The `partial_success.error_message`: how many spans were rejected and why."""
        if not self.rejected:
            return ""
        named = "; ".join(f"{label}: {why}" for label, why in self.rejected[:MAX_NAMED_REJECTIONS])
        more = len(self.rejected) - MAX_NAMED_REJECTIONS
        noun = "span" if len(self.rejected) == 1 else "spans"
        return f"{len(self.rejected)} {noun} rejected: {named}" + (f"; and {more} more" if more > 0 else "")


def ingest_otlp(store: Store, body: bytes, fmt: str, *,
                max_future: timedelta | None = DEFAULT_MAX_FUTURE_SKEW, first_index: int = 0,
                max_spans: int | None = None) -> OtlpResult:
    """Ingest one OTLP export request body (`fmt`: protobuf or json, already decompressed); a
    request of more than `max_spans` spans is refused whole (PayloadTooLarge)."""
    return ingest_spans(store, decode_request(body, fmt, first_index, max_spans), max_future=max_future)


def ingest_spans(store: Store, decoded: Sequence[SpanRecord | RejectedSpan], *,
                 max_future: timedelta | None = DEFAULT_MAX_FUTURE_SKEW) -> OtlpResult:
    """Map decoded spans to events and store the usable ones in one transaction; spans that
    start more than `max_future` ahead of the clock are rejected like other bad spans."""
    result = OtlpResult(spans=len(decoded))
    records: list[SpanRecord] = []
    for item in decoded:
        if isinstance(item, RejectedSpan):
            result.rejected.append((item.label, item.message))
        else:
            records.append(item)
    if not records:
        return result
    # Children end, and are exported, before their parents: storing in start order keeps a
    # session's timeline in order where start times tie at millisecond precision.
    records.sort(key=lambda r: r.start_ns)

    own = [explicit_session(r) for r in records]
    named: dict[str, str] = {}  # trace id -> first session named in this request
    for record, session_id in zip(records, own):
        # An id that cannot be stored (too long, a NUL) is not spread over the trace; its own
        # span is rejected.
        if (session_id is not None and record.trace_id not in named and len(session_id) <= MAX_ID_LEN
                and "\x00" not in session_id):
            named[record.trace_id] = session_id
    # Mapping, validation and the batch's rows happen before the writer's turn, with each span
    # in the session its request names, or else (for now) the session named after its trace.
    raw = [span_to_event(r, "") for r in records]
    for record, event, session_id in zip(records, raw, own):
        event["session_id"] = session_id or named.get(record.trace_id) or record.trace_id
    _inherit_agents(records, raw)
    tool_arguments(records, raw)
    count_failures_once(store, records, raw)
    count_model_calls_once(store, records, raw)
    valid, errors = validate_events(raw, max_future=max_future)
    rejected = {e["index"] for e in errors}
    positions = [i for i in range(len(raw)) if i not in rejected]  # raw index of each valid event
    batch = prepare_batch(store, valid, _quiet_sessions(records, raw))
    trace_ids = list(dict.fromkeys(r.trace_id for r in records))

    # In the server this runs on the writer thread (see obsctl/store/sqlite/writer.py).
    stored, moved = store.run_write(
        lambda uow: _store_spans(uow, records, raw, own, named, trace_ids, valid, positions, batch))
    result.moved += moved
    if errors:
        result.rejected.extend(_rejections(records, errors))
    result.stored = stored.stored
    result.duplicates = stored.duplicates
    result.sessions = stored.sessions
    return result


def _store_spans(store: Store, records: list[SpanRecord], raw: list[dict], own: list[str | None],
                 named: dict[str, str], trace_ids: list[str], valid: list[ValidEvent],
                 positions: list[int], batch):
    """Give each span its session (from the request or remembered traces) and store the
    usable ones, in one transaction. Returns (stored, spans moved); it may run again if its
    transaction had to be redone, so it changes nothing outside the database (`raw` and
    `valid` are copied before a session is filled in)."""
    with store.transaction():
        # Two requests settling the usage of one trace's spans take turns (see usage.py).
        store.otlp.lock_traces(usage_traces(records, raw))
        remembered = store.otlp.trace_sessions(trace_ids)
        new_links = [(t, s) for t, s in named.items() if t not in remembered]
        moved = 0
        if new_links:
            store.otlp.link_traces(new_links)
            # Spans stored earlier without a known session are in a session named after
            # the trace; one query finds which of the traces have such a session.
            early = store.otlp.session_agents([t for t, s in new_links if s != t])
            for trace_id, session_id in new_links:
                if trace_id in early and session_id != trace_id:
                    moved += store.otlp.move_trace_events(trace_id, trace_id, session_id)
        # Spans whose request named no session join the one an earlier request named for their
        # trace, if any: only then is the prepared batch worked out again.
        later = {i: remembered[r.trace_id] for i, (r, session_id) in enumerate(zip(records, own))
                 if not session_id and not named.get(r.trace_id) and remembered.get(r.trace_id)}
        if later:
            raw = [dict(event, session_id=later[i]) if i in later else event for i, event in enumerate(raw)]
            valid = [v._replace(row=v.row._replace(session_id=later[i])) if i in later else v
                     for v, i in zip(valid, positions)]
            batch = prepare_batch(store, valid, _quiet_sessions(records, raw))
        stored = store_prepared(store, valid, batch)
        settle_usage(store, records, raw)
        _fill_sessions(store, records, raw)
        # GenAI log records that arrived before their span: their messages join its event.
        attach_pending_logs(store, [v.row.event_id for v in valid])
    return stored, moved


def _quiet_sessions(records: list[SpanRecord], raw: list[dict]) -> frozenset[str]:
    """The sessions whose spans in this request hold no agent run (no agent span, no model call
    but embeddings, no tool call): background work, such as indexing or embeddings at start-up.
    A session is background while every request says so; the first span of a run makes it a run
    for good (the store keeps the least of the flags)."""
    sessions = {event["session_id"] for event in raw}
    runs = {event["session_id"] for record, event in zip(records, raw) if is_run_span(record)}
    return frozenset(sessions - runs)


def _inherit_agents(records: list[SpanRecord], raw: list[dict]) -> None:
    """A span without an agent name of its own (a model call, a tool, a step) belongs to the
    nearest agent span above it in the request: its event takes that agent's name rather than
    the service name. A span's own agent name always wins."""
    own = {event["event_id"]: session_agent(record) for record, event in zip(records, raw)}
    if not any(own.values()):
        return
    parents = {event["event_id"]: event.get("parent_id") for event in raw}
    for event in raw:
        if own[event["event_id"]] is not None:
            continue
        parent, seen = parents.get(event["event_id"]), 0
        while parent is not None and parent in own and seen < len(raw):
            inherited = own[parent]
            if inherited is not None:
                if len(inherited) <= MAX_TEXT_LEN:
                    event["agent_name"] = inherited
                break
            parent, seen = parents.get(parent), seen + 1


def _rejections(records: list[SpanRecord], errors: list[dict]) -> list[tuple[str, str]]:
    by_index: dict[int, list[str]] = {}
    for e in errors:
        by_index.setdefault(e["index"], []).append(
            f"{e['field']} {e['message']}" if e["field"] else e["message"])
    return [(f"{records[i].trace_id}:{records[i].span_id}", "; ".join(messages))
            for i, messages in by_index.items()]


def _fill_sessions(store: Store, records: list[SpanRecord], raw: list[dict]) -> None:
    """Session metadata from resource attributes; the agent name from the agent span.

    An auto-created session takes the agent name of its first event, often the service
    name of an LLM span; an agent name set by the instrumentation (from the root agent span,
    else the earliest agent span) replaces it, but never a name another source gave the session.
    """
    metadata: dict[str, str] = {}
    agents: dict[str, tuple[tuple, str]] = {}
    fallbacks: dict[str, set] = {}
    for record, event in zip(records, raw):
        session_id = event["session_id"]
        if session_id not in metadata and record.resource:
            metadata[session_id] = orjson.dumps(record.resource).decode()
        fallbacks.setdefault(session_id, {"unknown"}).add(service_name(record))
        agent = session_agent(record)
        if agent is None or len(agent) > MAX_TEXT_LEN:
            continue
        # The root agent span's name wins, then the earliest agent span's.
        key = (bool(record.parent_span_id), record.start_ns)
        if session_id not in agents or key < agents[session_id][0]:
            agents[session_id] = (key, agent)
    store.otlp.fill_session_metadata([(m, s) for s, m in metadata.items()])
    if not agents:
        return
    current = store.otlp.session_agents(list(agents))
    store.otlp.set_session_agents([
        (agent, session_id) for session_id, (_, agent) in agents.items()
        if session_id in current and current[session_id] != agent
        and current[session_id] in fallbacks[session_id]
    ])
