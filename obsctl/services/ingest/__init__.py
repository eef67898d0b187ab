"""Ingest: validate a batch of events, then store it in one transaction.

Validation lists every bad event (index, field, message) and stores nothing when any is
bad. Storage is idempotent on `event_id`: an event already stored is counted as a duplicate
and never adds to the session totals again.
"""

from __future__ import annotations

import difflib
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from obsctl.config import DEFAULT_MAX_FUTURE_SKEW
from obsctl.errors import InvalidInput, PayloadTooLarge
from obsctl.store import Store
from obsctl.timeutil import format_ts, normalize_ts, spoken_duration
from obsctl.timeutil import now as clock_now
from obsctl.vocabulary import ERROR_TYPES, is_error_event, tool_error, tool_field

MAX_ID_LEN = 128
MAX_TEXT_LEN = 256
# Token counts beyond this are certainly wrong and would overflow SQLite's 64-bit sums.
MAX_TOKENS = 2**40
# About 31,700 years: anything longer is a unit mistake, and it keeps the sums finite.
MAX_DURATION_MS = 1e15
_OBJECT_FIELDS = ("input_data", "output_data", "tool_call", "decision_trace", "metadata")
# The fields of an event (the spec's event table, the session_end fields, and parent_id).
# Other keys are accepted for forward compatibility, counted and reported as warnings.
EVENT_FIELDS = frozenset({
    "event_type", "session_id", "event_id", "timestamp", "model", "input_data", "output_data",
    "tokens_in", "tokens_out", "tool_call", "decision_trace", "duration_ms", "agent_name",
    "metadata", "status", "total_tokens_in", "total_tokens_out", "parent_id",
})
# Whether every key of a dict is an event field (iterates the dict; no set is built).
_KNOWN = EVENT_FIELDS.issuperset
# How many unknown field names a warning names, and how many distinct names are counted.
MAX_NAMED_FIELDS = 10
MAX_COUNTED_FIELDS = 1000
_dumps = orjson.dumps


class UnknownFields:
    """Counts of the events that carried fields obsctl does not know, by field name.

    Such events are stored (forward compatibility) but said so: a typo such as `evnt_type`
    would otherwise silently turn into a default. At most MAX_COUNTED_FIELDS distinct names
    are counted, so memory stays bounded whatever the input.
    """

    __slots__ = ("events", "counts", "uncounted")

    def __init__(self) -> None:
        self.events = 0
        self.counts: dict[str, int] = {}
        self.uncounted = 0  # occurrences of names beyond MAX_COUNTED_FIELDS

    def add(self, names: Iterable[str]) -> None:
        self.events += 1
        counts = self.counts
        for name in names:
            if name in counts:
                counts[name] += 1
            elif len(counts) < MAX_COUNTED_FIELDS:
                counts[name] = 1
            else:
                self.uncounted += 1

    def warnings(self) -> list[dict]:
        """`[]`, or one warning: `{"code", "message", "events", "fields": {name: events}}`,
        naming the most frequent fields first (then by name)."""
        if not self.events:
            return []
        ranked = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))
        named = [(show_field(name), count) for name, count in ranked[:MAX_NAMED_FIELDS]]
        text = ", ".join(f"{name} ({count})" for name, count in named)
        hidden = len(ranked) - len(named)
        if self.uncounted:
            text += f" and more than {hidden} other fields" if hidden else " and other fields"
        elif hidden:
            text += f" and {hidden} other field{'s' if hidden > 1 else ''}"
        noun = "event" if self.events == 1 else "events"
        return [{
            "code": "unknown_fields",
            "message": f"{self.events} {noun} had unknown fields: {text}",
            "events": self.events,
            "fields": dict(named),
        }]


def show_field(name: str) -> str:
    """A field name as printed in a message: at most 64 characters, control characters escaped."""
    if not name:
        return '""'
    text = name if len(name) <= 64 else name[:63] + "…"
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text


@dataclass
class IngestResult:
    processed: int = 0
    duplicates: int = 0
    stored: int = 0
    sessions: set[str] = field(default_factory=set)
    warnings: list[dict] = field(default_factory=list)

    def as_response(self) -> dict:
        """The body of `POST /events` (DECISIONS: status, processed, duplicates), plus
        `warnings` when there is something to say (events with unknown fields)."""
        body = {"status": "ok", "processed": self.processed, "duplicates": self.duplicates}
        if self.warnings:
            body["warnings"] = self.warnings
        return body


class ValidEvent:
    """A validated event: the row to insert plus what the session bookkeeping needs."""

    __slots__ = ("row", "client_id", "status", "final_in", "final_out", "metadata", "unknown")

    def __init__(self, row: tuple, client_id: bool, status: Any = None, final_in: Any = None,
                 final_out: Any = None, metadata: str | None = None, unknown: Any = None):
        self.row = row
        self.client_id = client_id
        self.status = status
        self.final_in = final_in
        self.final_out = final_out
        self.metadata = metadata
        self.unknown = unknown  # the set of unknown field names, or None

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
    if type(value) is float:
        # `1e30` or `2.5` is a number, just not an integer: show the value, not its type.
        limit = f" of at most {MAX_TOKENS}" if value > MAX_TOKENS else ""
        _err(errors, index, name, f"must be a non-negative integer{limit}, got {value!r}")
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


def _fast_validate(ev: Any, now: str, limit: str) -> ValidEvent | None:
    """The hot path: straight-line checks for a well-formed ordinary event.

    Returns None for anything unusual (a problem, a lifecycle event, a non-dict), which
    then goes through `validate_event` for the exact messages. Both accept the same events.
    `limit` is the latest timestamp accepted (normalised text).
    """
    if type(ev) is not dict or not ev:
        return None
    unknown = None
    if not _KNOWN(ev):
        unknown = ev.keys() - EVENT_FIELDS
        if len(unknown) == len(ev) or "events" in unknown or "resourceSpans" in unknown:
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
        if timestamp > limit:
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
    # The session_end fields are checked on every event, like any field of the table.
    status = get("status")
    if status is not None and type(status) is not str:
        return None
    for final in (get("total_tokens_in"), get("total_tokens_out")):
        if final is not None and (type(final) is not int or not 0 <= final <= MAX_TOKENS):
            return None
    client_id = event_id is not None
    if not client_id:
        event_id = str(uuid.uuid4())
    if tool_call is not None:
        tool_name = tool_call.get("name")
        if tool_name is None:
            tool_name = tool_call.get("tool_name")  # the alias (events.TOOL_ALIASES)
        if tool_name is not None and type(tool_name) is not str:
            tool_name = str(tool_name)[:MAX_TEXT_LEN]
    else:
        tool_name = None
    is_error = (event_type in ERROR_TYPES or event_type.endswith("_error")
                or (output_data is not None and bool(output_data.get("error")))
                or (tool_call is not None and bool(tool_error(tool_call))))
    try:
        encoded = [_dumps(v).decode() if v is not None else None
                   for v in (input_data, output_data, tool_call, decision_trace, metadata)]
    except TypeError:
        return None  # e.g. an integer beyond 64 bits: the slow path names the field
    return ValidEvent((
        event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, duration,
        *encoded, agent_name, tool_name, 1 if is_error else 0, parent_id,
    ), client_id, None, None, None, None, unknown)


# Compares after every normalised timestamp: no limit.
NO_LIMIT = "\uffff"


def _shape_problem(ev: dict, unknown: set) -> str | None:
    """Why an object with unknown keys is not an event at all (None when it is one)."""
    if type(ev.get("events")) is list:
        others = _names(k for k in ev if k != "events")
        return (f'has an "events" array next to other keys ({others}): a {{"events": [...]}} '
                f"wrapper must have no other key")
    if "resourceSpans" in ev:
        return ("is an OTLP export request (resourceSpans), not an event: ingest it with "
                "--format otlp-json or POST it to /v1/traces")
    if len(unknown) == len(ev):
        guesses = [(name, _closest(name)) for name in sorted(ev)[:5]]
        guesses = [(name, close) for name, close in guesses if close]
        hint = ""
        if len(guesses) == 1:
            hint = f"; did you mean {guesses[0][1]}?"
        elif guesses:
            hint = "; did you mean " + ", ".join(f"{c} for {show_field(n)}" for n, c in guesses) + "?"
        return (f"is not an event: none of its keys ({_names(ev)}) is an event field such as "
                f"event_type, session_id or timestamp{hint}")
    return None


def _names(names: Iterable[str], *, limit: int = 5) -> str:
    """Up to `limit` field names for a message, sorted."""
    names = sorted(names)
    shown = [show_field(n) for n in names[:limit]]
    more = len(names) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _closest(name: str) -> str | None:
    close = difflib.get_close_matches(name, sorted(EVENT_FIELDS), n=1, cutoff=0.75)
    return close[0] if close else None


def _suggestion(name: str) -> str:
    close = _closest(name)
    return f" (did you mean {close}?)" if close else ""


def validate_event(ev: Any, index: int, errors: list, now: str, *, limit: str = NO_LIMIT,
                   skew: timedelta | None = None, strict_fields: bool = False) -> ValidEvent | None:
    """Validate and normalise one event; append problems to `errors`, return None if bad.

    A timestamp after `limit` (now + `skew`) is an error; so are unknown fields when
    `strict_fields`, otherwise their names are left on the result's `unknown`.
    """
    if type(ev) is not dict:
        _err(errors, index, None, f"event must be a JSON object, got {_type_name(ev)}")
        return None
    if not ev:
        _err(errors, index, None, "is empty: an event has at least one field such as "
                                  "event_type, session_id or timestamp")
        return None
    before = len(errors)
    unknown = None
    if not _KNOWN(ev):
        unknown = ev.keys() - EVENT_FIELDS
        problem = _shape_problem(ev, unknown)
        if problem is not None:
            _err(errors, index, None, problem)
            return None
        if strict_fields:
            for name in sorted(unknown):
                _err(errors, index, show_field(name), f"is not an event field{_suggestion(name)}")
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
        elif not duration >= 0:
            _err(errors, index, "duration_ms", f"must be a non-negative number, got {duration}")
        elif duration > MAX_DURATION_MS:
            _err(errors, index, "duration_ms",
                 f"must be at most 10^15 milliseconds (about 31,700 years), got {duration}")

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
        else:
            if timestamp > limit:
                ahead = f"more than {spoken_duration(skew)} " if skew else ""
                _err(errors, index, "timestamp",
                     f"is {ahead}in the future: {timestamp} (server time {now}; the accepted "
                     f"skew is set by OBSCTL_MAX_FUTURE_SKEW)")

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

    # Read by session_end only, but a wrong type is an error on any event.
    status = ev.get("status")
    if status is not None and type(status) is not str:
        _err(errors, index, "status", f"must be a string, got {_type_name(status)}")
    final_in = _check_count(ev, "total_tokens_in", index, errors)
    final_out = _check_count(ev, "total_tokens_out", index, errors)
    if event_type == "session_start":
        if ev.get("session_id") is None:
            _err(errors, index, "session_id", "is required for session_start")
        if agent_name is None and ev.get("agent_name") is None:
            _err(errors, index, "agent_name", "is required for session_start")
    parent_id = ev.get("parent_id")
    if parent_id is not None and type(parent_id) is not str:
        _err(errors, index, "parent_id", f"must be a string, got {_type_name(parent_id)}")

    if len(errors) != before:
        return None

    client_id = event_id is not None
    if not client_id:
        event_id = str(uuid.uuid4())
    tool_name = tool_field(tool_call, "name")
    if tool_name is not None and type(tool_name) is not str:
        tool_name = str(tool_name)[:MAX_TEXT_LEN]
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
    return ValidEvent(row, client_id, status, final_in, final_out, meta_json, unknown)


def validate_events(
    raw: Sequence[Any],
    *,
    first_index: int = 0,
    max_future: timedelta | None = DEFAULT_MAX_FUTURE_SKEW,
    unknown: UnknownFields | None = None,
    strict_fields: bool = False,
) -> tuple[list[ValidEvent], list[dict]]:
    """Validate a sequence of raw events; returns (valid events, error details).

    Timestamps more than `max_future` ahead of the clock are errors (None: no limit). Events
    with unknown fields are counted in `unknown`, or are errors when `strict_fields`.
    """
    errors: list[dict] = []
    current = clock_now()
    now = format_ts(current)
    limit = NO_LIMIT
    # Beyond year 9999 (OverflowError) no parseable timestamp is later: no limit either.
    if max_future is not None and current <= datetime.max.replace(tzinfo=UTC) - max_future:
        limit = format_ts(current + max_future)
    valid = []
    append = valid.append
    fast = _fast_validate
    for offset, ev in enumerate(raw):
        result = fast(ev, now, limit)
        if result is None or result.unknown is not None:
            if result is None or strict_fields:
                result = validate_event(ev, first_index + offset, errors, now, limit=limit,
                                        skew=max_future, strict_fields=strict_fields)
                if result is None:
                    continue
            if result.unknown is not None and unknown is not None:
                unknown.add(result.unknown)
        append(result)
    return valid, errors


def parse_batch_body(body: Any, *, max_batch: int) -> list:
    """Check the shape of a `POST /events` body: `{"events": [...]}` and nothing else, within
    the batch limit."""
    if type(body) is not dict:
        raise InvalidInput('request body must be a JSON object: {"events": [...]}')
    events = body.get("events")
    if type(events) is not list:
        got = f" (got keys: {_names(body)})" if body else ""
        raise InvalidInput(f'request body must have an "events" array: {{"events": [...]}}{got}')
    if len(body) > 1:
        raise InvalidInput(f'request body has unknown top-level keys next to "events": '
                           f'{_names(k for k in body if k != "events")}; send {{"events": [...]}} only')
    if len(events) > max_batch:
        raise PayloadTooLarge(
            f"batch has {len(events)} events; at most {max_batch} are accepted per request"
        )
    return events


def ingest_events(store: Store, raw: Sequence[Any], *,
                  max_future: timedelta | None = DEFAULT_MAX_FUTURE_SKEW) -> IngestResult:
    """Validate a batch and store it atomically; any bad event rejects the whole batch.

    Events with unknown fields are stored and reported in the result's `warnings`.
    """
    unknown = UnknownFields()
    valid, errors = validate_events(raw, max_future=max_future, unknown=unknown)
    if errors:
        noun = "event" if len({e["index"] for e in errors}) == 1 else "events"
        count = len({e["index"] for e in errors})
        first = errors[0]
        where = f"events[{first['index']}]" + (f".{first['field']}" if first["field"] else "")
        raise InvalidInput(
            f"{count} invalid {noun}; nothing stored (first: {where} {first['message']})",
            details=errors,
        )
    result = store_events(store, valid)
    result.warnings = unknown.warnings()
    return result


def store_events(store: Store, valid: Sequence[ValidEvent]) -> IngestResult:
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
    stored = store.run_write(lambda uow: _store(uow, valid))
    result.stored = stored
    result.duplicates = len(valid) - stored
    result.sessions = {v.row[1] for v in valid}
    return result


def _store(store: Store, valid: Sequence[ValidEvent]) -> int:
    """Insert the new events of `valid` and update their sessions; returns how many were new."""
    with store.transaction():
        prepared = _prepare(valid, set())
        rows = prepared[0]
        if any(v.client_id for v in valid):
            try:
                with store.transaction():
                    if _write(store, prepared, skip_existing=True) != len(rows):
                        raise _SomeAlreadyStored()
            except _SomeAlreadyStored:
                client_ids = [v.row[0] for v in valid if v.client_id]
                prepared = _prepare(valid, store.ingest.existing_event_ids(client_ids))
                rows = prepared[0]
                _write(store, prepared)
        else:
            _write(store, prepared)
    return len(rows)


class _SomeAlreadyStored(Exception):
    pass


def _write(store, prepared, *, skip_existing: bool = False) -> int:
    rows, deltas, starts, ends = prepared
    return store.ingest.write_batch(rows, deltas.values(), starts, ends, skip_existing=skip_existing)


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
            # session_id, agent, started_at, in, out, events, errors, duration, last event,
            # body events, body errors (the last two leave session_start/session_end out)
            d = deltas[session_id] = [session_id, row[13] or "unknown", ts, 0, 0, 0, 0, 0.0, ts, 0, 0]
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
        else:
            d[9] += 1
            d[10] += row[15]
    return rows, deltas, starts, ends
