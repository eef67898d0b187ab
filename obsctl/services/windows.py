"""The time window of a query: `since` (an age before `until`, like 24h, 30m or 7d, or an ISO
8601 time) and `until` (an ISO 8601 time, default now), checked once for every area that
takes them (incidents, changes, triage batch, search, bulk export) and for the CLI's options."""

from __future__ import annotations

import re
from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.timeutil import format_ts, normalize_ts, now, parse_age, parse_ts

DEFAULT_SINCE = "24h"


def window(since: str | None, until: str | None) -> tuple[str, str]:
    """[since, until) as stored timestamps. `since` is an age before `until` (`24h`, `7d`) or an
    ISO 8601 time; `until` an ISO 8601 time, default now."""
    end = parse_time(until, "until") if until is not None else format_ts(now())
    text = DEFAULT_SINCE if since is None else since
    if _AGE.match(text if type(text) is str else ""):
        start = format_ts(parse_ts(end) - parse_age(text))
    else:
        start = parse_time(text, "since")
    if start >= end:
        raise InvalidInput(f"since ({start}) must be before until ({end})")
    return start, end


def optional_window(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """As `window`, each bound None when not given (no default age)."""
    if since is None:
        return None, (parse_time(until, "until") if until is not None else None)
    return window(since, until)


_AGE = re.compile(r"^\s*[0-9]+\s*[mhdw]\s*$")


def check_since(text: str) -> str:
    """`since` alone (an age or a time), for the CLI's usage check."""
    return text if _AGE.match(text) and parse_age(text) else parse_time(text, "since")


def check_until(text: str | None) -> str | None:
    return None if text is None else parse_time(text, "until")


def parse_time(text: Any, name: str, ages: str = "24h, 30m, 7d") -> str:
    """`text` as a stored timestamp, else InvalidInput naming `name` (and, for `since`, the
    ages it also takes, `ages` as examples)."""
    try:
        if type(text) is not str:
            raise ValueError
        return normalize_ts(text.strip())
    except ValueError:
        also = f" or an age like {ages}" if name == "since" else ""
        raise InvalidInput(f"{name} must be an ISO 8601 time{also}; got {describe_value(text)}") from None
