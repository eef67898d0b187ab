"""Ingest: validate a batch of events, then store it in one transaction.

Validation lists every bad event (index, field, message) and stores nothing when any is
bad. Storage is idempotent on `event_id`: an event already stored is counted as a duplicate
and never adds to the session totals again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import sqlite_utils

from obsctl.errors import InvalidInput, PayloadTooLarge
from obsctl.services.events import ERROR_TYPES, is_error_event
from obsctl.store import events as event_store
from obsctl.store.db import run_write, write_transaction
from obsctl.timeutil import normalize_ts, now_iso

MAX_ID_LEN = 128
MAX_TEXT_LEN = 256
# Token counts beyond this are certainly wrong and would overflow SQLite's 64-bit sums.
MAX_TOKENS = 2**40
MAX_DURATION_MS = 1e15
_OBJECT_FIELDS = ("input_data", "output_data", "tool_call", "decision_trace", "metadata")
_dumps = orjson.dumps


@dataclass
class IngestResult:
    processed: int = 0
    duplicates: int = 0
    stored: int = 0
    sessions: set[str] = field(default_factory=set)

    def as_response(self) -> dict:
        """The body of `POST /events` (DECISIONS: status, processed, duplicates)."""
        return {"status": "ok", "processed": self.processed, "duplicates": self.duplicates}


class ValidEvent:
    """A validated event: the row to insert plus what the session bookkeeping needs."""

    __slots__ = ("row", "client_id", "status", "final_in", "final_out", "metadata")

    def __init__(self, row: tuple, client_id: bool, status: Any = None, final_in: Any = None,
                 final_out: Any = None, metadata: str | None = None):
        self.row = row
        self.client_id = client_id
        self.status = status
        self.final_in = final_in
        self.final_out = final_out
        self.metadata = metadata

    @property
    def event_id(self) -> str:
        return self.row[0]


def _err(errors: list, index: int, field_name: str | None, message: str) -> None:
    errors.append({"index": index, "field": field_name, "message": message})


def _check_str(ev: dict, name: str, maxlen: int, index: int, errors: list, default=None):
    value = ev.get(name)
    if value is None:
        return default
    if type(value) is not str:
        _err(errors, index, name, f"must be a string, got {_type_name(value)}")
        return default
    if len(value) > maxlen:
        _err(errors, index, name, f"must be at most {maxlen} characters (got {len(value)})")
    elif not value and name in ("session_id", "event_id", "event_type"):
        _err(errors, index, name, "must not be empty")
    return value


def _check_count(ev: dict, name: str, index: int, errors: list):
    value = ev.get(name)
    if value is None:
        return None
    if type(value) is not int:
        _err(errors, index, name, f"must be a non-negative integer, got {_type_name(value)}")
        return None
    if value < 0:
        _err(errors, index, name, f"must be a non-negative integer, got {value}")
    elif value > MAX_TOKENS:
        _err(errors, index, name, f"must be at most {MAX_TOKENS}, got {value}")
    return value


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)


def _fast_validate(ev: Any, now: str) -> ValidEvent | None:
    """The hot path: straight-line checks for a well-formed ordinary event.

    Returns None for anything unusual (a problem, a lifecycle event, a non-dict), which
    then goes through `validate_event` for the exact messages. Both accept the same events.
    """
    if type(ev) is not dict:
        return None
    get = ev.get
    event_type = get("event_type")
    if event_type is None:
        event_type = "generic"
    elif type(event_type) is not str or not event_type or len(event_type) > MAX_TEXT_LEN \
            or event_type == "session_start" or event_type == "session_end":
        return None
    session_id = get("session_id")
    if session_id is None:
        session_id = "unknown"
    elif type(session_id) is not str or not session_id or len(session_id) > MAX_ID_LEN:
        return None
    event_id = get("event_id")
    if event_id is not None and (type(event_id) is not str or not event_id or len(event_id) > MAX_ID_LEN):
        return None
    model = get("model")
    if model is not None and (type(model) is not str or len(model) > MAX_TEXT_LEN):
        return None
    agent_name = get("agent_name")
    if agent_name is not None and (type(agent_name) is not str or len(agent_name) > MAX_TEXT_LEN):
        return None
    tokens_in = get("tokens_in")
    if tokens_in is not None and (type(tokens_in) is not int or not 0 <= tokens_in <= MAX_TOKENS):
        return None
    tokens_out = get("tokens_out")
    if tokens_out is not None and (type(tokens_out) is not int or not 0 <= tokens_out <= MAX_TOKENS):
        return None
    duration = get("duration_ms")
    if duration is not None:
        kind = type(duration)
        if (kind is not int and kind is not float) or not 0 <= duration <= MAX_DURATION_MS:
            return None
    timestamp = get("timestamp")
    if timestamp is None:
        timestamp = now
    elif type(timestamp) is not str:
        return None
    else:
        try:
            timestamp = normalize_ts(timestamp)
        except (ValueError, OverflowError):
            return None
    input_data = get("input_data")
    output_data = get("output_data")
    tool_call = get("tool_call")
    decision_trace = get("decision_trace")
    metadata = get("metadata")
    for value in (input_data, output_data, tool_call, decision_trace, metadata):
        if value is not None and type(value) is not dict:
            return None
    parent_id = get("parent_id")
    if parent_id is not None and type(parent_id) is not str:
        return None
    client_id = event_id is not None
    if not client_id:
        event_id = str(uuid.uuid4())
    if tool_call is not None:
        tool_name = tool_call.get("name")
        if tool_name is not None and type(tool_name) is not str:
            tool_name = str(tool_name)[:MAX_TEXT_LEN]
    else:
        tool_name = None
    is_error = (event_type in ERROR_TYPES or event_type.endswith("_error")
                or (output_data is not None and bool(output_data.get("error")))
                or (tool_call is not None and bool(tool_call.get("error"))))
    try:
        encoded = [_dumps(v).decode() if v is not None else None
                   for v in (input_data, output_data, tool_call, decision_trace, metadata)]
    except TypeError:
        return None  # e.g. an integer beyond 64 bits: the slow path names the field
    return ValidEvent((
        event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, duration,
        *encoded, agent_name, tool_name, 1 if is_error else 0, parent_id,
    ), client_id)


def validate_event(ev: Any, index: int, errors: list, now: str) -> ValidEvent | None:
    """Validate and normalise one event; append problems to `errors`, return None if bad."""
    if type(ev) is not dict:
        _err(errors, index, None, f"event must be a JSON object, got {_type_name(ev)}")
        return None
    before = len(errors)
    event_type = _check_str(ev, "event_type", MAX_TEXT_LEN, index, errors, "generic")
    session_id = _check_str(ev, "session_id", MAX_ID_LEN, index, errors, "unknown")
    event_id = _check_str(ev, "event_id", MAX_ID_LEN, index, errors)
    model = _check_str(ev, "model", MAX_TEXT_LEN, index, errors)
    agent_name = _check_str(ev, "agent_name", MAX_TEXT_LEN, index, errors)
    tokens_in = _check_count(ev, "tokens_in", index, errors)
    tokens_out = _check_count(ev, "tokens_out", index, errors)

    duration = ev.get("duration_ms")
    if duration is not None:
        kind = type(duration)
        if kind is not int and kind is not float:
            _err(errors, index, "duration_ms", f"must be a non-negative number, got {_type_name(duration)}")
        elif not 0 <= duration <= MAX_DURATION_MS:
            _err(errors, index, "duration_ms", f"must be a non-negative number, got {duration}")

    timestamp = ev.get("timestamp")
    if timestamp is None:
        timestamp = now
    elif type(timestamp) is not str:
        _err(errors, index, "timestamp", f"must be an ISO 8601 string, got {_type_name(timestamp)}")
    else:
        try:
            timestamp = normalize_ts(timestamp)
        except (ValueError, OverflowError):
            _err(errors, index, "timestamp", f"is not an ISO 8601 timestamp: {timestamp[:64]!r}")

    objects = []
    for name in _OBJECT_FIELDS:
        value = ev.get(name)
        if value is not None and type(value) is not dict:
            _err(errors, index, name, f"must be a JSON object or null, got {_type_name(value)}")
        elif value is not None:
            try:
                _dumps(value)
            except TypeError as exc:
                _err(errors, index, name, f"cannot be stored as JSON: {exc}")
        objects.append(value)
    input_data, output_data, tool_call, decision_trace, metadata = objects

    status = final_in = final_out = None
    if event_type == "session_start":
        if ev.get("session_id") is None:
            _err(errors, index, "session_id", "is required for session_start")
        if agent_name is None and ev.get("agent_name") is None:
            _err(errors, index, "agent_name", "is required for session_start")
    elif event_type == "session_end":
        status = ev.get("status")
        if status is not None and type(status) is not str:
            _err(errors, index, "status", f"must be a string, got {_type_name(status)}")
        final_in = _check_count(ev, "total_tokens_in", index, errors)
        final_out = _check_count(ev, "total_tokens_out", index, errors)

    if len(errors) != before:
        return None

    client_id = event_id is not None
    if not client_id:
        event_id = str(uuid.uuid4())
    tool_name = tool_call.get("name") if tool_call is not None else None
    if tool_name is not None and type(tool_name) is not str:
        tool_name = str(tool_name)[:MAX_TEXT_LEN]
    parent_id = ev.get("parent_id")
    if parent_id is not None and type(parent_id) is not str:
        parent_id = None
    meta_json = _dumps(metadata).decode() if metadata is not None else None
    row = (
        event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, duration,
        _dumps(input_data).decode() if input_data is not None else None,
        _dumps(output_data).decode() if output_data is not None else None,
        _dumps(tool_call).decode() if tool_call is not None else None,
        _dumps(decision_trace).decode() if decision_trace is not None else None,
        meta_json, agent_name, tool_name,
        1 if is_error_event(event_type, output_data, tool_call) else 0,
        parent_id,
    )
    return ValidEvent(row, client_id, status, final_in, final_out, meta_json)


def validate_events(raw: Sequence[Any], *, first_index: int = 0) -> tuple[list[ValidEvent], list[dict]]:
    """Validate a sequence of raw events; returns (valid events, error details)."""
    errors: list[dict] = []
    now = now_iso()
    valid = []
    append = valid.append
    fast = _fast_validate
    for offset, ev in enumerate(raw):
        result = fast(ev, now)
        if result is None:
            result = validate_event(ev, first_index + offset, errors, now)
            if result is None:
                continue
        append(result)
    return valid, errors


def parse_batch_body(body: Any, *, max_batch: int) -> list:
    """Check the shape of a `POST /events` body: `{"events": [...]}` within the batch limit."""
    if type(body) is not dict:
        raise InvalidInput('request body must be a JSON object: {"events": [...]}')
    events = body.get("events")
    if type(events) is not list:
        raise InvalidInput('request body must have an "events" array: {"events": [...]}')
    if len(events) > max_batch:
        raise PayloadTooLarge(
            f"batch has {len(events)} events; at most {max_batch} are accepted per request"
        )
    return events


def ingest_events(db: sqlite_utils.Database, raw: Sequence[Any]) -> IngestResult:
    """Validate a batch and store it atomically; any bad event rejects the whole batch."""
    valid, errors = validate_events(raw)
    if errors:
        noun = "event" if len({e["index"] for e in errors}) == 1 else "events"
        count = len({e["index"] for e in errors})
        first = errors[0]
        where = f"events[{first['index']}]" + (f".{first['field']}" if first["field"] else "")
        raise InvalidInput(
            f"{count} invalid {noun}; nothing stored (first: {where} {first['message']})",
            details=errors,
        )
    return store_events(db, valid)


def store_events(db: sqlite_utils.Database, valid: Sequence[ValidEvent]) -> IngestResult:
    """Store validated events in one transaction; duplicates of stored events are skipped.

    The common case (no event already stored) costs one INSERT OR IGNORE per batch; when it
    inserts fewer rows than expected, the batch is redone exactly with the stored ids known,
    so a duplicate never adds to the session totals.
    """
    result = IngestResult(processed=len(valid))
    if not valid:
        return result
    # In the server this runs on the writer thread, possibly in one transaction with other
    # batches queued at the same time; each batch's counts are its own.
    stored = run_write(db, lambda wdb: _store(wdb, valid))
    result.stored = stored
    result.duplicates = len(valid) - stored
    result.sessions = {v.row[1] for v in valid}
    return result


def _store(db: sqlite_utils.Database, valid: Sequence[ValidEvent]) -> int:
    """Insert the new events of `valid` and update their sessions; returns how many were new."""
    with write_transaction(db):
        prepared = _prepare(valid, set())
        rows = prepared[0]
        if any(v.client_id for v in valid):
            try:
                with db.atomic():
                    if _write(db, prepared, skip_existing=True) != len(rows):
                        raise _SomeAlreadyStored()
            except _SomeAlreadyStored:
                client_ids = [v.row[0] for v in valid if v.client_id]
                prepared = _prepare(valid, event_store.existing_event_ids(db, client_ids))
                rows = prepared[0]
                _write(db, prepared)
        else:
            _write(db, prepared)
    return len(rows)


class _SomeAlreadyStored(Exception):
    pass


def _write(db, prepared, *, skip_existing: bool = False) -> int:
    rows, deltas, starts, ends = prepared
    return event_store.write_batch(db, rows, deltas.values(), starts, ends, skip_existing=skip_existing)


def _prepare(valid: Sequence[ValidEvent], seen: set[str]):
    """Rows to insert (skipping ids in `seen` and repeats within the batch) and the
    per-session deltas, session_start fills and session_end updates they imply."""
    rows = []
    deltas: dict[str, list] = {}
    starts = []
    ends = []
    for v in valid:
        row = v.row
        event_id = row[0]
        if event_id in seen:
            continue
        seen.add(event_id)
        rows.append(row)
        session_id, event_type, ts = row[1], row[2], row[3]
        d = deltas.get(session_id)
        if d is None:
            # session_id, agent, started_at, in, out, events, errors, duration, last event
            d = deltas[session_id] = [session_id, row[13] or "unknown", ts, 0, 0, 0, 0, 0.0, ts]
        elif d[1] == "unknown" and row[13]:
            d[1] = row[13]
        d[3] += row[5] or 0
        d[4] += row[6] or 0
        d[5] += 1
        d[6] += row[15]
        d[7] += row[7] or 0
        if ts < d[2]:
            d[2] = ts
        elif ts > d[8]:
            d[8] = ts
        if event_type == "session_start":
            starts.append((row[13], v.metadata, ts, session_id))
        elif event_type == "session_end":
            status = v.status if v.status in ("completed", "error") else "completed"
            ends.append((ts, status, v.final_in, v.final_out, session_id))
    return rows, deltas, starts, ends
