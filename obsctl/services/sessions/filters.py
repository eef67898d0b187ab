"""The filters, order and cursor of a session list, parsed and checked once for the CLI, the
HTTP API, the remote client and the dashboard (models/sessions.py SessionFilter).

A cursor is opaque to callers: base64url of [sort, descending, sort value, session_id] of the
last row of a page. The next page is the rows after that key in the same order (keyset
pagination: as fast 500 pages deep as on page one), so a cursor only makes sense with the
sort it was made for, and is refused with another.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import orjson

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.models.sessions import SESSION_RANGES, SESSION_SORT_KEYS, SessionFilter
from obsctl.params import MAX_COUNT, IntParam
from obsctl.services.sessions.housekeeping import check_key, check_tag_filters
from obsctl.services.windows import parse_time
from obsctl.timeutil import format_ts, now, parse_age, parse_ts
from obsctl.vocabulary import SESSION_STATUSES

DEFAULT_SORT = "-start"
# Values one filter may list (they become an IN list).
MAX_VALUES = 100
MAX_VALUE_LEN = 256
# min_NAME and max_NAME of each whole-number SESSION_RANGES name (tokens), and of cost (USD).
RANGE_PARAMS = {f"{bound}_{name}": IntParam(f"{bound}_{name}", 0, MAX_COUNT)
                for name in SESSION_RANGES if name != "cost" for bound in ("min", "max")}
COST_PARAMS = ("min_cost", "max_cost")
MAX_COST = 1e9
# The filters that take several values (repeated query parameters, repeated CLI options).
LIST_PARAMS = {
    "agent": "Only this agent's sessions (repeat: any of them)",
    "model": "Only sessions with an event of this model (repeat: any)",
    "tool": "Only sessions that called this tool, events.tool_name (repeat: any)",
    "error_type": "Only sessions with an error event of this event type, e.g. timeout, rate_limit, "
                  "tool_error (repeat: any)",
    "tag": "key:value; only sessions with this tag (repeat: every one of them)",
    "metadata": "key:value (or key=value); only sessions whose metadata has this key with this value, "
                "a text, a number as its digits or true/false (repeat: every one of them)",
}
_CURSOR = re.compile(r"[A-Za-z0-9_-]{1,400}")
_AGE = re.compile(r"[0-9]+\s*[mhdw]")


def sort_choices() -> list[str]:
    """Every accepted `sort` value: each key ascending, then descending (`-tokens`)."""
    return [*SESSION_SORT_KEYS, *(f"-{k}" for k in SESSION_SORT_KEYS)]


def parse_sort(text: Any) -> tuple[str, bool]:
    """`tokens` (ascending) or `-tokens` (descending) as (key, descending); None: newest first."""
    if text is None:
        text = DEFAULT_SORT
    key = text[1:] if type(text) is str and text.startswith("-") else text
    if key not in SESSION_SORT_KEYS:
        raise InvalidInput(f"sort must be one of {', '.join(SESSION_SORT_KEYS)}, with a leading - for "
                           f"largest (or newest) first; got {describe_value(text)}")
    return key, text.startswith("-")


def _values(name: str, given: Any) -> tuple[str, ...]:
    if given is None:
        return ()
    values = (given,) if isinstance(given, str) else tuple(given)
    if len(values) > MAX_VALUES:
        raise InvalidInput(f"at most {MAX_VALUES} values of {name} are accepted; got {len(values)}")
    for value in values:
        if type(value) is not str or not value or len(value) > MAX_VALUE_LEN:
            raise InvalidInput(f"{name} must be a text of 1 to {MAX_VALUE_LEN} characters; "
                               f"got {describe_value(value)}")
    return tuple(dict.fromkeys(values))


def parse_metadata_filter(text: Any) -> tuple[str, str]:
    """`key=value` (or `key:value`) as (key, value): the key is letters, digits, _ . - (so the
    first `=` or `:` ends it), the value any text."""
    if type(text) is not str:
        raise InvalidInput(f"metadata must be key=value; got {describe_value(text)}")
    cut = min((i for i in (text.find(":"), text.find("=")) if i >= 0), default=-1)
    if cut < 0:
        raise InvalidInput(f"metadata must be key=value (or key:value); got {describe_value(text)}")
    value = text[cut + 1:]
    if len(value) > MAX_VALUE_LEN or "\x00" in value:
        raise InvalidInput(f"a metadata value has at most {MAX_VALUE_LEN} characters; got {describe_value(value)}")
    return check_key(text[:cut], "metadata key"), value


def check_metadata_filters(values: Any) -> list[str]:
    """The `metadata` filters as given, each checked (for the CLI's usage check)."""
    for value in _values("metadata", values):
        parse_metadata_filter(value)
    return values


def _time(text: Any, name: str) -> str:
    return parse_time(text, name, ages="2h, 30m, 7d")


def _time_range(since: Any, from_: Any, to: Any) -> tuple[str | None, str | None]:
    """[start, end) of started_at: `since` an age before `to` (or now) or a time, `from` a time."""
    if since is not None and from_ is not None:
        raise InvalidInput("give since (an age like 2h, or a time) or from (a time), not both")
    end = _time(to, "to") if to is not None else None
    start: str | None
    if from_ is not None:
        start = _time(from_, "from")
    elif since is not None and type(since) is str and _AGE.fullmatch(since.strip()):
        start = format_ts(parse_ts(end or format_ts(now())) - parse_age(since.strip()))
    else:
        start = _time(since, "since") if since is not None else None
    if start is not None and end is not None and start >= end:
        raise InvalidInput(f"the start of the time range ({start}) must be before its end (to: {end})")
    return start, end


def check_cost(name: str, value: Any) -> float | None:
    """A USD bound: a number from 0 to 1e9 (a text as the CLI and the API give it is read)."""
    if value is None:
        return None
    try:
        if type(value) is bool:
            raise ValueError
        number = float(value.strip()) if type(value) is str else float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not 0 <= number <= MAX_COST:  # also refuses NaN
        raise InvalidInput(f"{name} must be a number of USD from 0 to {MAX_COST:.0e}; got {describe_value(value)}")
    return number


def _has_errors(value: Any) -> bool | None:
    if value is None or type(value) is bool:
        return value
    raise InvalidInput(f"has_errors must be true or false; got {describe_value(value)}")


def session_filter(*, agent: Any = None, status: Any = None, model: Any = None, tool: Any = None,
                   error_type: Any = None, since: Any = None, from_: Any = None, to: Any = None,
                   has_errors: Any = None, tag: Any = None, metadata: Any = None, sort: Any = None,
                   **ranges: Any) -> SessionFilter:
    """The SessionFilter of these request values, checked: an unknown sort, a bad time, a
    minimum above its maximum and malformed pairs are InvalidInput naming the problem.
    `ranges` are min_NAME/max_NAME of SESSION_RANGES (min_tokens, max_tokens)."""
    unknown = set(ranges) - set(RANGE_PARAMS) - set(COST_PARAMS)
    if unknown:
        raise TypeError(f"unknown session filters: {', '.join(sorted(unknown))}")
    if status is not None and status not in SESSION_STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(SESSION_STATUSES)}; got {describe_value(status)}")
    counts = {name: param.check(ranges.get(name)) for name, param in RANGE_PARAMS.items()}
    costs = {name: check_cost(name, ranges.get(name)) for name in COST_PARAMS}
    bounds: dict[str, float | None] = {**counts, **costs}
    for name in SESSION_RANGES:
        low, high = bounds[f"min_{name}"], bounds[f"max_{name}"]
        if low is not None and high is not None and low > high:
            raise InvalidInput(f"min_{name} ({low}) must not be above max_{name} ({high})")
    started_from, started_to = _time_range(since, from_, to)
    key, descending = parse_sort(sort)
    return SessionFilter(
        agents=_values("agent", agent), status=status, models=_values("model", model),
        tools=_values("tool", tool), error_types=_values("error_type", error_type),
        started_from=started_from, started_to=started_to, has_errors=_has_errors(has_errors),
        tags=tuple(check_tag_filters(tag)),
        metadata=tuple(parse_metadata_filter(v) for v in _values("metadata", metadata)),
        sort=key, descending=descending, min_cost=costs["min_cost"], max_cost=costs["max_cost"], **counts)


def encode_cursor(selection: SessionFilter, row: dict) -> str:
    """The cursor of the page after `row` (a store row with its sort_value)."""
    return cursor_of([selection.sort, selection.descending, row["sort_value"], row["session_id"]])


def cursor_of(key: list) -> str:
    """An opaque cursor holding `key` (base64url of its JSON)."""
    return base64.urlsafe_b64encode(orjson.dumps(key)).decode().rstrip("=")


def key_of(cursor: Any, bad: InvalidInput) -> Any:
    """The key a cursor_of cursor holds, else `bad`."""
    if type(cursor) is not str or _CURSOR.fullmatch(cursor) is None:
        raise bad
    try:
        return orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError):
        raise bad from None


def decode_cursor(selection: SessionFilter, cursor: Any) -> tuple | None:
    """(sort value, session_id) of a cursor made for this sort, else InvalidInput."""
    if cursor is None:
        return None
    bad = InvalidInput(f"cursor is not one this list gave (pass the `next` of the previous page "
                       f"unchanged); got {describe_value(cursor)}")
    key = key_of(cursor, bad)
    if type(key) is not list or len(key) != 4 or type(key[3]) is not str:
        raise bad
    sort, descending, value, session_id = key
    if sort != selection.sort or descending is not selection.descending:
        wanted = f"{'-' if descending else ''}{sort}"
        raise InvalidInput(f"this cursor continues a list sorted by {describe_value(wanted)}: "
                           f"give that sort with it, or start again without a cursor")
    text_key = sort == "start"
    if (type(value) is not str) if text_key else (type(value) not in (int, float) or type(value) is bool):
        raise bad
    return value, session_id
