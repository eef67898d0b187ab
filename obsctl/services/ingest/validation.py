"""Validation of ingested events: the one definition of a valid event.

Every bad event is listed (index, field, message); a well-formed event costs only the checks'
conditions, the message of a failed check is worked out when it fails. Unknown fields are
counted for the warning (shape.py: the event fields, the warning, objects that are not events).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import Any, NamedTuple

import orjson

from obsctl.config import DEFAULT_MAX_FUTURE_SKEW
from obsctl.models.ingest import MAX_DURATION_MS, MAX_ID_LEN, MAX_TEXT_LEN, MAX_TOKENS, EventRow
from obsctl.services.call_keys import call_key
from obsctl.services.ingest.shape import (
    EVENT_FIELDS,
    UnknownFields,
    parse_batch_body,
    shape_problem,
    show_field,
    suggestion,
)
from obsctl.timeutil import format_ts, normalize_ts, spoken_duration
from obsctl.timeutil import now as clock_now
from obsctl.vocabulary import ERROR_TYPES, tool_error, tool_field

__all__ = ["EVENT_FIELDS", "NO_LIMIT", "UnknownFields", "ValidEvent", "parse_batch_body",
           "show_field", "validate_event", "validate_events"]

_OBJECT_FIELDS = ("input_data", "output_data", "tool_call", "decision_trace", "metadata")
# The event fields in the order validate_event reads them, all at once (_fields).
_FIELD_ORDER = ("event_type", "session_id", "event_id", "timestamp", "model", "agent_name", "tokens_in",
                "tokens_out", "tokens_cache_read", "tokens_cache_write", "tokens_reasoning", "duration_ms",
                "input_data", "output_data", "tool_call", "decision_trace", "metadata", "status",
                "total_tokens_in", "total_tokens_out", "parent_id", "tags")
_NO_FIELDS = dict.fromkeys(_FIELD_ORDER)
_FIELD_COUNT = len(_NO_FIELDS)
_fields = itemgetter(*_FIELD_ORDER)
_dumps = orjson.dumps
_fromisoformat = datetime.fromisoformat


class ValidEvent(NamedTuple):
    """A validated event: its row (a typed EventRow) plus what the session bookkeeping needs."""

    row: EventRow
    client_id: bool  # the event_id came with the event (not generated)
    status: str | None = None
    final_in: int | None = None
    final_out: int | None = None
    unknown: Any = None  # the set of unknown field names, or None
    tags: Any = None  # a session_start's tags: {key: value}, or None

    @property
    def event_id(self) -> str:
        return self.row.event_id


# Compares after every normalised timestamp: no limit.
NO_LIMIT = "\uffff"


def validate_event(ev: Any, index: int, errors: list, now: str, limit: str = NO_LIMIT,
                   skew: timedelta | None = None, strict_fields: bool = False) -> ValidEvent | None:
    """Validate and normalise one event; append problems to `errors`, return None if bad.

    The one definition of a valid event. Each check is one condition on the common path;
    the message of a failed check is worked out only then (`_bad_*`), so a well-formed
    event costs no more than the conditions: no function call but the dict lookups, the
    timestamp parse and the JSON encoding of its objects. A timestamp after `limit` (now +
    `skew`) is an error; so are unknown fields when `strict_fields`, otherwise their names
    are left on the result's `unknown`.
    """
    if type(ev) is not dict or not ev:
        _bad_event(errors, index, ev)
        return None
    before = len(errors)
    unknown = None
    # Every field at once: the event over a dict of all fields set to None; a key that is not
    # an event field makes it longer.
    every = {**_NO_FIELDS, **ev}
    if len(every) != _FIELD_COUNT:
        unknown = ev.keys() - EVENT_FIELDS
        problem = shape_problem(ev, unknown)
        if problem is not None:
            _err(errors, index, None, problem)
            return None
        if strict_fields:
            for name in sorted(unknown):
                _err(errors, index, show_field(name), f"is not an event field{suggestion(name)}")
    (event_type, session_id, event_id, timestamp, model, agent_name, tokens_in, tokens_out, cache_read,
     cache_write, reasoning, duration, input_data, output_data, tool_call, decision_trace, metadata, status,
     final_in, final_out, parent_id, tags) = _fields(every)
    given_session = session_id
    if event_type is None:
        event_type = "generic"
    elif type(event_type) is not str or not event_type or len(event_type) > MAX_TEXT_LEN:
        _bad_text(errors, index, "event_type", event_type, MAX_TEXT_LEN)
        if type(event_type) is not str:
            event_type = "generic"
    if session_id is None:
        session_id = "unknown"
    elif type(session_id) is not str or not session_id or len(session_id) > MAX_ID_LEN:
        _bad_text(errors, index, "session_id", session_id, MAX_ID_LEN)
    if event_id is not None and (type(event_id) is not str or not event_id or len(event_id) > MAX_ID_LEN):
        _bad_text(errors, index, "event_id", event_id, MAX_ID_LEN)
    if model is not None and (type(model) is not str or len(model) > MAX_TEXT_LEN):
        _bad_text(errors, index, "model", model, MAX_TEXT_LEN)
    if agent_name is not None and (type(agent_name) is not str or len(agent_name) > MAX_TEXT_LEN):
        _bad_text(errors, index, "agent_name", agent_name, MAX_TEXT_LEN)
    if tokens_in is not None and (type(tokens_in) is not int or not 0 <= tokens_in <= MAX_TOKENS):
        _bad_count(errors, index, "tokens_in", tokens_in)
    if tokens_out is not None and (type(tokens_out) is not int or not 0 <= tokens_out <= MAX_TOKENS):
        _bad_count(errors, index, "tokens_out", tokens_out)
    if cache_read is not None or cache_write is not None or reasoning is not None:
        _check_token_parts(errors, index, tokens_in, tokens_out, cache_read, cache_write, reasoning)
    if duration is not None:
        kind = type(duration)
        if (kind is not int and kind is not float) or not 0 <= duration <= MAX_DURATION_MS:
            _bad_duration(errors, index, duration)

    if timestamp is None:
        timestamp = now
    elif type(timestamp) is not str:
        _err(errors, index, "timestamp", f"must be an ISO 8601 string, got {_type_name(timestamp)}")
    else:
        try:
            # timeutil.normalize_ts, with its common case inline: text already in the normalised
            # form (2026-11-21T20:42:19.123Z) is parsed only to check it, and kept as it is.
            if len(timestamp) == 24 and timestamp[23] == "Z" and timestamp[10] == "T" and timestamp[19] == ".":
                _fromisoformat(timestamp)
            else:
                timestamp = normalize_ts(timestamp)
        except (ValueError, OverflowError):
            _err(errors, index, "timestamp", f"is not an ISO 8601 timestamp: {timestamp[:64]!r}")
        else:
            if timestamp > limit:
                _future(errors, index, timestamp, now, skew)

    # Each object is null or a JSON object that can be stored as JSON text (not, for example,
    # one holding an integer beyond 64 bits); _bad_objects says which is not and why.
    input_json = output_json = tool_json = trace_json = metadata_json = None
    objects_ok = True
    try:
        if input_data is not None:
            if type(input_data) is dict:
                input_json = _dumps(input_data).decode()
            else:
                objects_ok = False
        if output_data is not None:
            if type(output_data) is dict:
                output_json = _dumps(output_data).decode()
            else:
                objects_ok = False
        if tool_call is not None:
            if type(tool_call) is dict:
                tool_json = _dumps(tool_call).decode()
            else:
                objects_ok = False
        if decision_trace is not None:
            if type(decision_trace) is dict:
                trace_json = _dumps(decision_trace).decode()
            else:
                objects_ok = False
        if metadata is not None:
            if type(metadata) is dict:
                metadata_json = _dumps(metadata).decode()
            else:
                objects_ok = False
    except TypeError:
        objects_ok = False
    if not objects_ok:
        _bad_objects(errors, index, (input_data, output_data, tool_call, decision_trace, metadata))

    # Read by session_end only, but a wrong type is an error on any event.
    if status is not None and type(status) is not str:
        _err(errors, index, "status", f"must be a string, got {_type_name(status)}")
    if final_in is not None and (type(final_in) is not int or not 0 <= final_in <= MAX_TOKENS):
        _bad_count(errors, index, "total_tokens_in", final_in)
    if final_out is not None and (type(final_out) is not int or not 0 <= final_out <= MAX_TOKENS):
        _bad_count(errors, index, "total_tokens_out", final_out)
    if event_type == "session_start":
        if given_session is None:
            _err(errors, index, "session_id", "is required for session_start")
        if agent_name is None:
            _err(errors, index, "agent_name", "is required for session_start")
    if parent_id is not None and type(parent_id) is not str:
        _err(errors, index, "parent_id", f"must be a string, got {_type_name(parent_id)}")
    if tags is not None:
        tags = _check_tags(errors, index, tags)

    if len(errors) != before:
        return None

    client_id = event_id is not None
    if not client_id:
        event_id = str(uuid.uuid4())
    tool_name = tool_key = None
    if tool_call is not None:
        tool_name = tool_field(tool_call, "name")
        if tool_name is not None:
            if type(tool_name) is not str:
                tool_name = str(tool_name)[:MAX_TEXT_LEN]
            tool_key = call_key(tool_name, tool_call)
    # No name or id needs a NUL character, and PostgreSQL text cannot hold one: refused on
    # every store alike (the objects are JSON text, where it is written as \u0000).
    if ("\x00" in session_id or "\x00" in event_type or "\x00" in event_id
            or (model is not None and "\x00" in model) or (agent_name is not None and "\x00" in agent_name)
            or (tool_name is not None and "\x00" in tool_name) or (parent_id is not None and "\x00" in parent_id)
            or (status is not None and "\x00" in status)):
        _bad_nul(errors, index, (("session_id", session_id), ("event_type", event_type),
                                 ("event_id", event_id), ("model", model), ("agent_name", agent_name),
                                 ("tool_call.name", tool_name), ("parent_id", parent_id), ("status", status)))
        return None
    # vocabulary.is_error_event inline (the objects are dicts or None here); a test holds
    # the two to the same answers.
    if (event_type in ERROR_TYPES or event_type.endswith("_error")
            or (output_data is not None and output_data.get("error"))
            or (tool_call is not None and tool_error(tool_call))):
        is_error = 1
    else:
        is_error = 0
    row = _new_row(EventRow, (
        event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, duration,
        input_json, output_json, tool_json, trace_json, metadata_json, agent_name, tool_name,
        is_error, parent_id, cache_read, cache_write, reasoning, tool_key,
    ))
    return _new_row(ValidEvent, (row, client_id, status, final_in, final_out, unknown, tags))


def _check_tags(errors: list, index: int, tags: Any) -> dict | None:
    """A `tags` object (key -> value) as services/sessions/housekeeping.py checks it."""
    from obsctl.errors import InvalidInput
    from obsctl.services.sessions.housekeeping import check_tags

    try:
        return check_tags(tags)
    except InvalidInput as exc:
        _err(errors, index, "tags", str(exc))
        return None


# A named tuple (EventRow, ValidEvent) from a tuple of its fields, without the generated
# __new__'s argument handling, which costs more than the rest of building a row.
_new_row = tuple.__new__


def _err(errors: list, index: int, field_name: str | None, message: str) -> None:
    errors.append({"index": index, "field": field_name, "message": message})


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)


def _bad_event(errors: list, index: int, ev: Any) -> None:
    if type(ev) is not dict:
        _err(errors, index, None, f"event must be a JSON object, got {_type_name(ev)}")
    else:
        _err(errors, index, None, "is empty: an event has at least one field such as "
                                  "event_type, session_id or timestamp")


def _future(errors: list, index: int, timestamp: str, now: str, skew: timedelta | None) -> None:
    ahead = f"more than {spoken_duration(skew)} " if skew else ""
    _err(errors, index, "timestamp",
         f"is {ahead}in the future: {timestamp} (server time {now}; the accepted "
         f"skew is set by OBSCTL_MAX_FUTURE_SKEW)")


def _bad_nul(errors: list, index: int, fields) -> None:
    for name, value in fields:
        if value is not None and "\x00" in value:
            _err(errors, index, name, "must not contain the NUL character (\\u0000)")


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


def _check_token_parts(errors: list, index: int, tokens_in: Any, tokens_out: Any, cache_read: Any,
                       cache_write: Any, reasoning: Any) -> None:
    """The cache and reasoning counts: each a count, and each a part of its whole (cache read
    and write of tokens_in, reasoning of tokens_out), as OpenTelemetry counts them."""
    parts_ok = True
    for name, value in (("tokens_cache_read", cache_read), ("tokens_cache_write", cache_write),
                        ("tokens_reasoning", reasoning)):
        if value is not None and (type(value) is not int or not 0 <= value <= MAX_TOKENS):
            _bad_count(errors, index, name, value)
            parts_ok = False
    if not parts_ok:
        return
    whole_in = tokens_in if type(tokens_in) is int else 0
    cached = (cache_read or 0) + (cache_write or 0)
    if cached > whole_in:
        both = cache_read is not None and cache_write is not None
        _err(errors, index, "tokens_cache_read" if cache_read is not None else "tokens_cache_write",
             f"{'plus tokens_cache_write ' if both else ''}({cached}) must not exceed tokens_in "
             f"({tokens_in if tokens_in is not None else 'null'}): tokens_in counts every input token, "
             f"cached ones included")
    whole_out = tokens_out if type(tokens_out) is int else 0
    if reasoning is not None and reasoning > whole_out:
        _err(errors, index, "tokens_reasoning",
             f"({reasoning}) must not exceed tokens_out ({tokens_out if tokens_out is not None else 'null'}): "
             f"tokens_out counts every output token, reasoning included")


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
    valid: list[ValidEvent] = []
    append = valid.append
    validate = validate_event
    for index, ev in enumerate(raw, first_index):
        result = validate(ev, index, errors, now, limit, max_future, strict_fields)
        if result is not None:
            append(result)
            if result[5] is not None and unknown is not None:  # result.unknown
                unknown.add(result[5])
    return valid, errors
