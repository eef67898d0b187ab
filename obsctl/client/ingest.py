"""Remote ingest: `obsctl --url URL ingest FILE|-` streams batches to the server's
`POST /events`, with the summary, rejections and warnings local ingest gives.

Records are validated here first, by the same `validate_events` as local ingest, so a bad
record is reported with its line and the same message, and only valid events are sent. An
event without an `event_id` gets one made from its line number and content (`line-N-<hash>`,
as local ingest gives it: services/ingest/stream.line_event_id) before it is sent: a batch sent again after a lost answer, or a whole file sent again after an
interrupted run, then stores each event once (the server skips ids it already holds and counts
them as duplicates). Memory stays bounded by one batch; a batch the server finds too large
(HTTP 413) is sent in halves.

`--strict` checks the whole stream before anything is sent (keeping the valid events in a
temporary file), so a bad record still means nothing is stored; the server then stores the
batches one by one, and a run interrupted midway can simply be run again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from typing import Any

import orjson

from obsctl.client.http import Client
from obsctl.errors import InvalidInput, PayloadTooLarge
from obsctl.services.ingest import DEFAULT_MAX_FUTURE_SKEW, validate_events
from obsctl.services.ingest.stream import DEFAULT_BATCH, StreamSummary, line_event_id, validated_batches

# The server's default OBSCTL_MAX_BATCH: a larger --batch-size is sent in batches of this size.
SERVER_BATCH = 1000


def ingest_stream(
    client: Client,
    records: Iterable[tuple[int, Any]],
    *,
    batch_size: int = DEFAULT_BATCH,
    strict: bool = False,
    max_future: timedelta | None = DEFAULT_MAX_FUTURE_SKEW,
    on_reject: Callable[[int, str], None] = lambda loc, msg: None,
    on_batch: Callable[[StreamSummary], None] = lambda summary: None,
) -> StreamSummary:
    """`obsctl.services.ingest.stream.ingest_stream`, storing through the server."""
    summary = StreamSummary()
    size = min(batch_size, SERVER_BATCH)

    def validate(raw: list) -> tuple[list, list[dict]]:
        return validate_events(raw, max_future=max_future, unknown=summary.unknown_fields,
                               strict_fields=strict)

    def checked() -> Iterator[tuple[list[dict], list[tuple[int, str]]]]:
        for batch in validated_batches(records, size, validate):
            yield [line_event_id(batch.raw[i], batch.locations[i]) for i in batch.valid_at], batch.rejects

    if not strict:
        for events, rejects in checked():
            for location, message in rejects:
                summary.rejected += 1
                on_reject(location, message)
            _send(client, events, summary)
            on_batch(summary)
        return summary

    with tempfile.TemporaryFile() as spool:
        for events, rejects in checked():
            for location, message in rejects:
                summary.rejected += 1
                on_reject(location, message)
            if not summary.rejected:
                spool.writelines(orjson.dumps(event) + b"\n" for event in events)
        if summary.rejected:
            raise InvalidInput(f"{summary.rejected} record(s) rejected; --strict: nothing was stored")
        spool.seek(0)
        batch: list[dict] = []
        for line in spool:
            batch.append(orjson.loads(line))
            if len(batch) >= size:
                _send(client, batch, summary)
                on_batch(summary)
                batch = []
        if batch:
            _send(client, batch, summary)
            on_batch(summary)
    return summary


def _send(client: Client, events: list[dict], summary: StreamSummary) -> None:
    """POST the events (in halves while the server says the body is too large) and add the
    answers to the summary."""
    if not events:
        return
    try:
        # Every event has an id, so sending the batch again stores nothing twice.
        answer = client.post_json("/events", {"events": events}, idempotent=True)
    except PayloadTooLarge:
        if len(events) == 1:
            raise
        half = len(events) // 2
        _send(client, events[:half], summary)
        _send(client, events[half:], summary)
        return
    summary.events += answer["processed"]
    summary.duplicates += answer["duplicates"]
    summary.stored += answer["processed"] - answer["duplicates"]
    # Where the server puts them: an event without a session is in session "unknown".
    summary.session_ids.update(event.get("session_id") or "unknown" for event in events)
