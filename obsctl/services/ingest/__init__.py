"""Ingest: validate a batch of events, then store it in one transaction.

Validation lists every bad event (index, field, message) and stores nothing when any is
bad. Storage is idempotent on `event_id`: an event already stored is counted as a duplicate
and never adds to the session totals again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, NamedTuple

from obsctl.config import DEFAULT_MAX_FUTURE_SKEW
from obsctl.errors import InvalidInput
from obsctl.models.ingest import MAX_ID_LEN, MAX_TEXT_LEN
from obsctl.services.ingest.validation import (
    EVENT_FIELDS,
    NO_LIMIT,
    UnknownFields,
    ValidEvent,
    parse_batch_body,
    show_field,
    validate_event,
    validate_events,
)
from obsctl.services.pricing import Pricer, pricer_of
from obsctl.store import Store

# The names other modules import from the area (validation lives in ingest/validation.py).
__all__ = [
    "DEFAULT_MAX_FUTURE_SKEW",
    "EVENT_FIELDS",
    "IngestResult",
    "MAX_ID_LEN",
    "MAX_TEXT_LEN",
    "NO_LIMIT",
    "UnknownFields",
    "ValidEvent",
    "ingest_events",
    "parse_batch_body",
    "prepare_batch",
    "show_field",
    "store_events",
    "store_prepared",
    "validate_event",
    "validate_events",
]


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
    # The rows, session deltas and rollup totals are worked out here, in the caller's thread:
    # in the server the writer thread, which every write waits for, then only runs the SQL.
    # It may also commit this batch with others queued at the same time; each batch's counts
    # are its own.
    return store_prepared(store, valid, prepare_batch(store, valid))


def prepare_batch(store: Store, valid: Sequence[ValidEvent], quiet: frozenset[str] = frozenset()) -> _Batch:
    """What storing `valid` in `store` writes (rows with their costs, session deltas, rollup
    totals), worked out before the write; pass it to `store_prepared` with the same events.
    `quiet`: the sessions whose events here are background work (services/otlp), which a new
    session starts as and an existing one stays as only if it already was."""
    return _prepare(valid, set(), pricer_of(store), quiet)


def store_prepared(store: Store, valid: Sequence[ValidEvent], batch: _Batch) -> IngestResult:
    """`store_events` for a batch already prepared by `prepare_batch(valid)`."""
    result = IngestResult(processed=len(valid))
    if not valid:
        return result
    pricer = pricer_of(store)
    stored = store.run_write(lambda uow: _store(uow, valid, batch, pricer))
    result.stored = stored
    result.duplicates = len(valid) - stored
    result.sessions = {v.row.session_id for v in valid}
    return result


def _store(store: Store, valid: Sequence[ValidEvent], batch: _Batch, pricer: Pricer) -> int:
    """Insert the new events of `valid` and update their sessions; returns how many were new."""
    with store.transaction():
        if any(v.client_id for v in valid):
            try:
                with store.transaction():
                    if _write(store, batch, skip_existing=True) != len(batch.rows):
                        raise _SomeAlreadyStored()
            except _SomeAlreadyStored:
                client_ids = [v.row.event_id for v in valid if v.client_id]
                batch = _prepare(valid, store.ingest.existing_event_ids(client_ids), pricer, batch.quiet)
                _write(store, batch)
        else:
            _write(store, batch)
    return len(batch.rows)


_UNKNOWN = object()


class _SomeAlreadyStored(Exception):
    pass


class _Batch(NamedTuple):
    """What one batch writes: event rows (plain tuples in EventRow's order, then cost_usd),
    per-session deltas, session_start fills, session_end updates, the rollup totals of its
    events per (event_type, hour, model), and the version of the price table that costed
    them (None when no event used tokens)."""

    rows: list[tuple]
    deltas: dict[str, list]
    starts: list[tuple]
    ends: list[tuple]
    totals: dict[tuple, list]
    tags: list[tuple]  # (session_id, key, value) from the batch's session_start events
    prices: str | None
    quiet: frozenset[str]  # the sessions whose events here are background work


def _write(store: Store, batch: _Batch, *, skip_existing: bool = False) -> int:
    written = store.ingest.write_batch(batch.rows, batch.deltas.values(), batch.starts, batch.ends,
                                       batch.totals, skip_existing=skip_existing, prices=batch.prices)
    if batch.tags and written == len(batch.rows):  # else the caller redoes the batch
        store.sessions.set_tags(batch.tags)
    return written


def _prepare(valid: Sequence[ValidEvent], seen: set[str], pricer: Pricer,
             quiet: frozenset[str] = frozenset()) -> _Batch:
    """Rows to insert (skipping ids in `seen` and repeats within the batch), each with its
    cost, and the per-session deltas, session_start fills, session_end updates and rollup
    totals they imply.

    An event that used tokens costs `pricer.cost(...)`; one whose model has no known price (or
    that names no model) is unpriced: its cost is NULL and its session counts it in
    `unpriced_calls`. An event without tokens costs nothing and is not counted."""
    price_of = pricer.price
    known: dict = {}  # model -> price, this batch's own cache: a dict lookup per event
    costed = False
    rows = []
    deltas: dict[str, list] = {}
    starts = []
    ends = []
    totals: dict[tuple, list] = {}
    tags: list[tuple] = []
    for v in valid:
        row = v.row
        # The row's fields in one step (EventRow's order), cheaper than attribute by attribute.
        (event_id, session_id, event_type, ts, model, tokens_in, tokens_out, duration, _, _, _, _,
         metadata, agent, _, is_error, _, cache_read, cache_write, reasoning, _) = row
        if event_id in seen:
            continue
        seen.add(event_id)
        has_parts = cache_read is not None or cache_write is not None or reasoning is not None
        cost = None
        if tokens_in or tokens_out:
            costed = True
            price = known.get(model, _UNKNOWN)
            if price is _UNKNOWN:
                price = known[model] = price_of(model)
            if price is not None:
                if not has_parts:
                    cost = (tokens_in or 0) * price.input_per_token + (tokens_out or 0) * price.output_per_token
                else:
                    cost = price.usage_cost(tokens_in, tokens_out, cache_read, cache_write, reasoning)
        # A plain tuple: sqlite3 binds a tuple subclass (EventRow) item by item, about 20% slower.
        rows.append((*row, cost))
        d = deltas.get(session_id)
        if d is None:
            # session_id, agent, started_at, in, out, events, errors, duration, last event,
            # body events, body errors (the last two leave session_start/session_end out),
            # cost of the priced events (None: none), unpriced calls, cache read, cache write
            # and reasoning tokens, background work (1) or not
            d = deltas[session_id] = [session_id, agent or "unknown", ts, 0, 0, 0, 0, 0.0, ts, 0, 0,
                                      None, 0, 0, 0, 0, 1 if session_id in quiet else 0]
        elif d[1] == "unknown" and agent:
            d[1] = agent
        d[3] += tokens_in or 0
        d[4] += tokens_out or 0
        d[5] += 1
        d[6] += is_error
        d[7] += duration or 0
        if cost is not None:
            d[11] = cost if d[11] is None else d[11] + cost
        elif tokens_in or tokens_out:
            d[12] += 1
        if has_parts:
            d[13] += cache_read or 0
            d[14] += cache_write or 0
            d[15] += reasoning or 0
        if ts < d[2]:
            d[2] = ts
        elif ts > d[8]:
            d[8] = ts
        if event_type == "session_start":
            starts.append((agent, metadata, ts, session_id))
            if v.tags:
                tags += [(session_id, key, value) for key, value in v.tags.items()]
        elif event_type == "session_end":
            status = v.status if v.status in ("completed", "error") else "completed"
            ends.append((ts, status, v.final_in, v.final_out, session_id))
        else:
            d[9] += 1
            d[10] += is_error
        # events, tokens in, tokens out, duration sum, durations counted, cost, priced calls,
        # unpriced calls, cache read, cache write, reasoning (store/event_stats_sql.MEASURES)
        key = (event_type, int(ts[11:13]), model or "")
        t = totals.get(key)
        if t is None:
            t = totals[key] = [0, 0, 0, 0.0, 0, 0.0, 0, 0, 0, 0, 0]
        t[0] += 1
        t[1] += tokens_in or 0
        t[2] += tokens_out or 0
        if duration is not None:
            t[3] += duration
            t[4] += 1
        if cost is not None:
            t[5] += cost
            t[6] += 1
        elif tokens_in or tokens_out:
            t[7] += 1
        if has_parts:
            t[8] += cache_read or 0
            t[9] += cache_write or 0
            t[10] += reasoning or 0
    # A key set twice in the batch takes its last value (one row per key: one upsert each).
    return _Batch(rows, deltas, starts, ends, totals, list({t[:2]: t for t in tags}.values()),
                  pricer.version if costed else None, quiet)
