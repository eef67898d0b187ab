"""What an event and a request body are shaped like: the event fields, the count of unknown
fields behind the warning, and the messages for objects that are not events at all.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from obsctl.errors import InvalidInput, PayloadTooLarge
from obsctl.models.ingest import EventInput

# The fields of an event, as declared (the spec's event table, the session_end fields, and
# parent_id). Other keys are accepted for forward compatibility, counted and reported as warnings.
EVENT_FIELDS = frozenset(EventInput.__struct_fields__)
# How many unknown field names a warning names, and how many distinct names are counted.
MAX_NAMED_FIELDS = 10
MAX_COUNTED_FIELDS = 1000


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


def shape_problem(ev: dict, unknown: set) -> str | None:
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


def suggestion(name: str) -> str:
    close = _closest(name)
    return f" (did you mean {close}?)" if close else ""


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
