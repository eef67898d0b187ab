"""Timestamps: every stored and returned time is UTC ISO 8601 with milliseconds and `Z`.

Normalised text sorts in time order, which is what lets SQLite compare and index it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

UTC = UTC


def format_ts(dt: datetime) -> str:
    """Format an aware or naive (taken as UTC) datetime as `YYYY-MM-DDTHH:MM:SS.mmmZ`."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC)
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:"
        f"{dt.second:02d}.{dt.microsecond // 1000:03d}Z"
    )


def now_iso() -> str:
    return format_ts(datetime.now(UTC))


def now() -> datetime:
    return datetime.now(UTC)


def normalize_ts(value: str) -> str:
    """Parse any ISO 8601 timestamp and return its normalised UTC form.

    Raises ValueError when the text is not ISO 8601. A naive time is taken as UTC.
    """
    dt = datetime.fromisoformat(value)
    # Already-normalised input (the common case from SDKs) is returned unchanged.
    if len(value) == 24 and value[-1] == "Z" and value[10] == "T" and value[19] == ".":
        return value
    if dt.year < 1:
        raise ValueError("year out of range")
    return format_ts(dt)


def parse_ts(value: str) -> datetime:
    """Parse a stored (normalised) timestamp back to an aware datetime."""
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt


def iso_minus(delta: timedelta, *, at: datetime | None = None) -> str:
    """The normalised timestamp `delta` before `at` (default: now)."""
    return format_ts((at or now()) - delta)


def ms_between(start: str | None, end: str | None) -> float | None:
    """Milliseconds from one stored timestamp to another, None when either is missing."""
    if not start or not end:
        return None
    return (parse_ts(end) - parse_ts(start)).total_seconds() * 1000.0


def spoken_duration(delta: timedelta) -> str:
    """A whole duration in words, in its largest exact unit: `1 day`, `6 hours`, `90 seconds`."""
    seconds = int(delta.total_seconds())
    for unit, size in (("week", 604800), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


_AGE_TEXT = re.compile(r"^\s*([0-9]+)\s*([mhdw])\s*$")
_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1),
          "w": timedelta(weeks=1)}
# A century: older than any stored timestamp can be, far from datetime's year-1 limit.
MAX_AGE = timedelta(days=36500)


def parse_age(text: str) -> timedelta:
    """`30d`, `12h`, `90m`, `2w` -> timedelta, from one minute to MAX_AGE (100 years)."""
    from obsctl.errors import InvalidInput
    from obsctl.jsonutil import describe_value

    match = _AGE_TEXT.match(text or "")
    digits = match.group(1).lstrip("0") if match else ""
    if match is None or not digits:
        raise InvalidInput(f"age must look like 30d, 12h, 90m or 2w (a positive number and a unit); got {describe_value(text)}")
    unit = _UNITS[match.group(2)]
    # Digits first: a huge number must not reach int() or timedelta (OverflowError).
    if len(digits) > 9 or int(digits) * unit > MAX_AGE:
        in_unit = "" if match.group(2) == "d" else f", {MAX_AGE // unit}{match.group(2)}"
        raise InvalidInput(f"age must be at most {MAX_AGE.days}d (100 years{in_unit}); "
                           f"got {describe_value(text.strip())}")
    return int(digits) * unit
