"""Validation of ingested events: the one definition of a valid event.

Every bad event is listed (index, field, message); a well-formed event costs only the checks'
conditions, the message of a failed check is worked out when it fails. Unknown fields are
counted for the warning; a request body's shape is checked here too.
"""

from __future__ import annotations

import difflib
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import orjson

from obsctl.config import DEFAULT_MAX_FUTURE_SKEW
from obsctl.errors import InvalidInput, PayloadTooLarge
from obsctl.models.ingest import MAX_DURATION_MS, MAX_ID_LEN, MAX_TEXT_LEN, MAX_TOKENS, EventInput, EventRow
from obsctl.timeutil import format_ts, normalize_ts, spoken_duration
from obsctl.timeutil import now as clock_now
from obsctl.vocabulary import is_error_event, tool_field

_OBJECT_FIELDS = ("input_data", "output_data", "tool_call", "decision_trace", "metadata")
# The fields of an event, as declared (the spec's event table, the session_end fields, and
# parent_id). Other keys are accepted for forward compatibility, counted and reported as warnings.
EVENT_FIELDS = frozenset(EventInput.__struct_fields__)
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



class ValidEvent(NamedTuple):
    """A validated event: its row (a typed EventRow) plus what the session bookkeeping needs."""

    row: EventRow
    client_id: bool  # the event_id came with the event (not generated)
    status: str | None = None
    final_in: int | None = None
    final_out: int | None = None
    unknown: Any = None  # the set of unknown field names, or None

    @property
    def event_id(self) -> str:
        return self.row.event_id


def _err(errors: list, index: int, field_name: str | None, message: str) -> None:
    errors.append({"index": index, "field": field_name, "message": message})


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)


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


def validate_event(ev: Any, index: int, errors: list, now: str, limit: str = NO_LIMIT,
                   skew: timedelta | None = None, strict_fields: bool = False) -> ValidEvent | None:
    """Validate and normalise one event; append problems to `errors`, return None if bad.

    The one definition of a valid event. Each check is one condition on the common path;
    the message of a failed check is worked out only then (`_bad_*`), so a well-formed
    event costs no more than the conditions. A timestamp after `limit` (now + `skew`) is an
    error; so are unknown fields when `strict_fields`, otherwise their names are left on the
    result's `unknown`.
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
    get = ev.get
    event_type = get("event_type")
    if event_type is None:
        event_type = "generic"
    elif type(event_type) is not str or not event_type or len(event_type) > MAX_TEXT_LEN:
        _bad_text(errors, index, "event_type", event_type, MAX_TEXT_LEN)
        if type(event_type) is not str:
            event_type = "generic"
    session_id = get("session_id")
    if session_id is None:
        session_id = "unknown"
    elif type(session_id) is not str or not session_id or len(session_id) > MAX_ID_LEN:
        _bad_text(errors, index, "session_id", session_id, MAX_ID_LEN)
    event_id = get("event_id")
    if event_id is not None and (type(event_id) is not str or not event_id or len(event_id) > MAX_ID_LEN):
        _bad_text(errors, index, "event_id", event_id, MAX_ID_LEN)
    model = get("model")
    if model is not None and (type(model) is not str or len(model) > MAX_TEXT_LEN):
        _bad_text(errors, index, "model", model, MAX_TEXT_LEN)
    agent_name = get("agent_name")
    if agent_name is not None and (type(agent_name) is not str or len(agent_name) > MAX_TEXT_LEN):
        _bad_text(errors, index, "agent_name", agent_name, MAX_TEXT_LEN)
    tokens_in = get("tokens_in")
    if tokens_in is not None and (type(tokens_in) is not int or not 0 <= tokens_in <= MAX_TOKENS):
        _bad_count(errors, index, "tokens_in", tokens_in)
    tokens_out = get("tokens_out")
    if tokens_out is not None and (type(tokens_out) is not int or not 0 <= tokens_out <= MAX_TOKENS):
        _bad_count(errors, index, "tokens_out", tokens_out)
    duration = get("duration_ms")
    if duration is not None:
        kind = type(duration)
        if (kind is not int and kind is not float) or not 0 <= duration <= MAX_DURATION_MS:
            _bad_duration(errors, index, duration)

    timestamp = get("timestamp")
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

    input_data = get("input_data")
    output_data = get("output_data")
    tool_call = get("tool_call")
    decision_trace = get("decision_trace")
    metadata = get("metadata")
    objects = (input_data, output_data, tool_call, decision_trace, metadata)
    encoded = None
    for value in objects:
        if value is not None and type(value) is not dict:
            break
    else:
        try:
            encoded = [_dumps(value).decode() if value is not None else None for value in objects]
        except TypeError:
            encoded = None  # e.g. an integer beyond 64 bits
    if encoded is None:
        _bad_objects(errors, index, objects)

    # Read by session_end only, but a wrong type is an error on any event.
    status = get("status")
    if status is not None and type(status) is not str:
        _err(errors, index, "status", f"must be a string, got {_type_name(status)}")
    final_in = get("total_tokens_in")
    if final_in is not None and (type(final_in) is not int or not 0 <= final_in <= MAX_TOKENS):
        _bad_count(errors, index, "total_tokens_in", final_in)
    final_out = get("total_tokens_out")
    if final_out is not None and (type(final_out) is not int or not 0 <= final_out <= MAX_TOKENS):
        _bad_count(errors, index, "total_tokens_out", final_out)
    if event_type == "session_start":
        if get("session_id") is None:
            _err(errors, index, "session_id", "is required for session_start")
        if agent_name is None:
            _err(errors, index, "agent_name", "is required for session_start")
    parent_id = get("parent_id")
    if parent_id is not None and type(parent_id) is not str:
        _err(errors, index, "parent_id", f"must be a string, got {_type_name(parent_id)}")

    if len(errors) != before:
        return None

    client_id = event_id is not None
    if not client_id:
        event_id = str(uuid.uuid4())
    tool_name = None
    if tool_call is not None:
        tool_name = tool_field(tool_call, "name")
        if tool_name is not None and type(tool_name) is not str:
            tool_name = str(tool_name)[:MAX_TEXT_LEN]
    input_json, output_json, tool_json, trace_json, metadata_json = encoded
    row = _new_row(EventRow, (
        event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, duration,
        input_json, output_json, tool_json, trace_json, metadata_json, agent_name, tool_name,
        1 if is_error_event(event_type, output_data, tool_call) else 0, parent_id,
    ))
    return _new_row(ValidEvent, (row, client_id, status, final_in, final_out, unknown))


# A named tuple (EventRow, ValidEvent) from a tuple of its fields, without the generated
# __new__'s argument handling, which costs more than the rest of building a row.
_new_row = tuple.__new__


def _bad_text(errors: list, index: int, name: str, value: Any, maxlen: int) -> None:
    if type(value) is not str:
        _err(errors, index, name, f"must be a string, got {_type_name(value)}")
    elif len(value) > maxlen:
        _err(errors, index, name, f"must be at most {maxlen} characters (got {len(value)})")
    else:
        _err(errors, index, name, "must not be empty")


def _bad_count(errors: list, index: int, name: str, value: Any) -> None:
    if type(value) is float:
        # `1e30` or `2.5` is a number, just not an integer: show the value, not its type.
        limit = f" of at most {MAX_TOKENS}" if value > MAX_TOKENS else ""
        _err(errors, index, name, f"must be a non-negative integer{limit}, got {value!r}")
    elif type(value) is not int:
        _err(errors, index, name, f"must be a non-negative integer, got {_type_name(value)}")
    elif value < 0:
        _err(errors, index, name, f"must be a non-negative integer, got {value}")
    else:
        _err(errors, index, name, f"must be at most {MAX_TOKENS}, got {value}")


def _bad_duration(errors: list, index: int, duration: Any) -> None:
    kind = type(duration)
    if kind is not int and kind is not float:
        _err(errors, index, "duration_ms", f"must be a non-negative number, got {_type_name(duration)}")
    elif not duration >= 0:
        _err(errors, index, "duration_ms", f"must be a non-negative number, got {duration}")
    else:
        _err(errors, index, "duration_ms",
             f"must be at most 10^15 milliseconds (about 31,700 years), got {duration}")


def _bad_objects(errors: list, index: int, objects: tuple) -> None:
    for name, value in zip(_OBJECT_FIELDS, objects):
        if value is None:
            continue
        if type(value) is not dict:
            _err(errors, index, name, f"must be a JSON object or null, got {_type_name(value)}")
            continue
        try:
            _dumps(value)
        except TypeError as exc:
            _err(errors, index, name, f"cannot be stored as JSON: {exc}")


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
    validate = validate_event
    for index, ev in enumerate(raw, first_index):
        result = validate(ev, index, errors, now, limit, max_future, strict_fields)
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
