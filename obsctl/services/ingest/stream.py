"""Ingest of a whole stream (file or pipe) in batches, as `obsctl ingest` does it.

Valid records are stored batch by batch while bad ones are reported with their location;
with `strict`, the whole stream is one transaction and nothing is stored if any is bad (an
event with a field obsctl does not know is bad then; otherwise it is stored and counted in
the summary's `warnings`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, NamedTuple

import orjson

from obsctl.errors import InvalidInput
from obsctl.services.ingest import DEFAULT_MAX_FUTURE_SKEW, UnknownFields, store_events, validate_events
from obsctl.services.ingest.source import Unreadable
from obsctl.services.search_index import catch_up
from obsctl.store import Store

DEFAULT_BATCH = 1000


@dataclass
class StreamSummary:
    events: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    session_ids: set[str] = field(default_factory=set)
    unknown_fields: UnknownFields = field(default_factory=UnknownFields)

    def warnings(self) -> list[dict]:
        return self.unknown_fields.warnings()

    def as_dict(self) -> dict:
        data: dict = {
            "events": self.events,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "sessions": len(self.session_ids),
        }
        warnings = self.warnings()
        if warnings:
            data["warnings"] = warnings
        return data


class _StrictAbort(Exception):
    pass


def ingest_stream(
    store: Store,
    records: Iterable[tuple[int, Any]],
    *,
    batch_size: int = DEFAULT_BATCH,
    strict: bool = False,
    max_future: timedelta | None = DEFAULT_MAX_FUTURE_SKEW,
    on_reject: Callable[[int, str], None] = lambda loc, msg: None,
    on_batch: Callable[[StreamSummary], None] = lambda summary: None,
) -> StreamSummary:
    """Validate and store `records` ((location, raw event) pairs) in batches."""
    summary = StreamSummary()

    def validate(raw: list) -> tuple[list, list[dict]]:
        return validate_events(raw, max_future=max_future, unknown=summary.unknown_fields,
                               strict_fields=strict)

    def run() -> None:
        for _, _, valid, _, rejects in validated_batches(records, batch_size, validate):
            for location, message in rejects:
                summary.rejected += 1
                on_reject(location, message)
            if strict and summary.rejected:
                continue  # keep reading: every bad record is reported
            result = store_events(store, valid)
            summary.events += result.processed
            summary.stored += result.stored
            summary.duplicates += result.duplicates
            summary.session_ids |= result.sessions
            on_batch(summary)

    if not strict:
        run()
    else:
        try:
            with store.transaction():
                run()
                if summary.rejected:
                    raise _StrictAbort()
        except _StrictAbort:
            raise InvalidInput(
                f"{summary.rejected} record(s) rejected; --strict: nothing was stored"
            ) from None
    catch_up(store)  # the stream's events are searchable once it ends (services/search_index.py)
    return summary


class CheckedBatch(NamedTuple):
    """One batch of a stream, validated: the raw records and their locations, the valid
    events (`valid`, from the raw records at `valid_at`) and the rejected (location, reason)."""

    raw: list
    locations: list[int]
    valid: list
    valid_at: list[int]
    rejects: list[tuple[int, str]]


def line_event_id(event: Any, location: int) -> Any:
    """A file's record with an `event_id`: its own, or `line-<N>-<hash of its content>`.

    Local and remote file ingest give a record without an id the same id, so a file ingested
    twice (or a run interrupted and run again) stores each event once, and one file gives the
    same ids on SQLite and PostgreSQL. The line number keeps identical records on different
    lines distinct. Anything but an object is left for validation to reject."""
    if type(event) is not dict or event.get("event_id") is not None:
        return event
    digest = hashlib.sha256(orjson.dumps(event, option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]
    return {**event, "event_id": f"line-{location}-{digest}"}


def validated_batches(records: Iterable[tuple[int, Any]], batch_size: int, validate: Callable
                      ) -> Iterator[CheckedBatch]:
    """Parse-side work: the records in batches of `batch_size`, validated by `validate`; a
    valid event without an `event_id` gets its file id (line_event_id)."""
    raw: list = []
    locations: list[int] = []
    rejects: list[tuple[int, str]] = []
    for location, value in records:
        if isinstance(value, Unreadable):
            rejects.append((location, value.message))
            continue
        raw.append(value)
        locations.append(location)
        if len(raw) >= batch_size:
            yield _validate(validate, raw, locations, rejects)
            raw, locations, rejects = [], [], []
    if raw or rejects:
        yield _validate(validate, raw, locations, rejects)


def _validate(validate: Callable, raw: list, locations: list[int], rejects: list) -> CheckedBatch:
    valid, errors = validate(raw)
    by_index: dict[int, list[str]] = {}
    for e in errors:
        by_index.setdefault(e["index"], []).append(_described(e))
    rejects.extend((locations[index], "; ".join(messages)) for index, messages in by_index.items())
    rejects.sort()
    valid_at = [i for i in range(len(raw)) if i not in by_index] if by_index else list(range(len(raw)))
    valid = [v if v.client_id else v._replace(row=v.row._replace(
                 event_id=line_event_id(raw[i], locations[i])["event_id"]), client_id=True)
             for v, i in zip(valid, valid_at)]
    return CheckedBatch(raw, locations, valid, valid_at, rejects)


def _described(error: dict) -> str:
    """An error detail as a sentence: `tokens_in must be ...`, `the object is not an event ...`."""
    if error["field"]:
        return f"{error['field']} {error['message']}"
    message = error["message"]
    return f"the object {message}" if message.startswith(("is ", "has ")) else message
