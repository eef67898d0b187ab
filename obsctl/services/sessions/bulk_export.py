"""Export the events of many sessions at once (`obsctl export --all`, `GET /export`) as JSON
Lines, CSV or Parquet, streamed from the store in batches so that any size exports in
bounded memory.

Every format has the same columns, one event a row (models/sessions.py EventLine): the event
as ingest takes it, so JSON Lines re-ingest to the same events (`obsctl ingest FILE`), and on
session_end events the session's status and final token counts (the event row does not keep
them). Events come in time order, ties in arrival order, which keeps a session_end after the
events before it: a re-ingested session ends with the same status and totals. What ingest
cannot carry is not exported: a session's agent or status set by other means than its events
(OTLP resource attributes, a session never ended) comes back as its events make it.

Validation (formats, filters, Parquet's optional dependency) happens before anything is
produced, so a caller can still answer with an error.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any, cast

import orjson

from obsctl.errors import InvalidInput
from obsctl.models.sessions import EventLine, EventSelection, SessionStatus
from obsctl.services.sessions.export import ExportStream, csv_cell
from obsctl.services.windows import optional_window
from obsctl.store import Store
from obsctl.vocabulary import EVENT_LINE_COLUMNS

FORMATS = ("jsonl", "csv", "parquet")
MEDIA_TYPES = {
    "jsonl": "application/x-ndjson",
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}
LINE_COLUMNS = tuple(EventLine.__struct_fields__)
STATUSES = ("active", "completed", "error")
# Values one filter may list (they become an IN list).
MAX_FILTER_VALUES = 200
# Rows per chunk of the body (JSON Lines and CSV) and per Parquet row group.
ROWS_PER_CHUNK = 1000
ROWS_PER_ROW_GROUP = 10_000
PARQUET_MISSING = ("Parquet export needs pyarrow, which is not installed where obsctl runs: "
                   "pip install 'obsctl[parquet]' (or export --format jsonl or csv)")

_JSON_COLUMNS = frozenset(("input_data", "output_data", "tool_call", "decision_trace", "metadata"))
_JSON_AT = tuple(i for i, c in enumerate(EVENT_LINE_COLUMNS) if c in _JSON_COLUMNS)
_TYPE_AT = EVENT_LINE_COLUMNS.index("event_type")
_SESSION_AT = len(EVENT_LINE_COLUMNS)  # the session's agent, status, tokens in, tokens out follow


def select_events(*, since: str | None = None, until: str | None = None,
                  agents: Iterable[str] = (), statuses: Iterable[str] = (),
                  session_ids: Iterable[str] = (), event_types: Iterable[str] = ()) -> EventSelection:
    """The selection these filters make, checked: `since` an ISO 8601 time or an age before
    `until` (24h, 7d), `until` an ISO 8601 time, statuses among active, completed, error."""
    start, end = optional_window(since, until)
    statuses = tuple(statuses)
    for status in statuses:
        if status not in STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(STATUSES)}; got {str(status)[:40]!r}")
    values = {"agent": tuple(agents), "status": statuses, "session": tuple(session_ids),
              "type": tuple(event_types)}
    for name, given in values.items():
        if len(given) > MAX_FILTER_VALUES:
            raise InvalidInput(f"at most {MAX_FILTER_VALUES} values of {name} are accepted; got {len(given)}")
        if any(type(v) is not str or not v for v in given):
            raise InvalidInput(f"{name} must not be empty")
    return EventSelection(since=start, until=end, agents=_unique(values["agent"]),
                          statuses=cast(tuple[SessionStatus, ...], _unique(statuses)), session_ids=_unique(values["session"]),
                          event_types=_unique(values["type"]))


def _unique(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def check_bulk_format(fmt: str | None) -> str:
    fmt = "jsonl" if fmt is None else fmt
    if fmt not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}; got {str(fmt)[:40]!r}")
    if fmt == "parquet":
        _pyarrow()
    return fmt


def export_events(store: Store, selection: EventSelection, fmt: str | None = "jsonl") -> ExportStream:
    """Start exporting the selected events (all of them for an empty selection) as `fmt`:
    jsonl (default), csv or parquet. Raises InvalidInput before any output for a bad format
    or a missing pyarrow; the body then reads the events as it is consumed."""
    fmt = check_bulk_format(fmt)
    rows = store.events.iter_events(selection)
    chunks = {"jsonl": _jsonl_chunks, "csv": _csv_chunks, "parquet": _parquet_chunks}[fmt](rows)
    return ExportStream(fmt, MEDIA_TYPES[fmt], f"obsctl-export.{fmt}", chunks, -1)


def event_line(row: tuple) -> dict[str, Any]:
    """One exported event (EventLine) from a store row: JSON columns spliced in as stored."""
    line = dict(zip(EVENT_LINE_COLUMNS, row))
    for i in _JSON_AT:
        if row[i] is not None:
            line[EVENT_LINE_COLUMNS[i]] = orjson.Fragment(row[i])
    if row[_TYPE_AT] == "session_end":
        line["status"], line["total_tokens_in"], line["total_tokens_out"] = row[_SESSION_AT + 1:_SESSION_AT + 4]
    else:
        line["status"] = line["total_tokens_in"] = line["total_tokens_out"] = None
    return line


def _batches(rows: Iterable[tuple], size: int) -> Iterator[list[tuple]]:
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _jsonl_chunks(rows: Iterable[tuple]) -> Iterator[bytes]:
    dumps = orjson.dumps
    for batch in _batches(rows, ROWS_PER_CHUNK):
        yield b"".join(dumps(event_line(row)) + b"\n" for row in batch)


def _csv_chunks(rows: Iterable[tuple]) -> Iterator[bytes]:
    # RFC 4180 like the session export: CRLF line ends; JSON columns as compact JSON text.
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(LINE_COLUMNS)
    yield buffer.getvalue().encode()
    for batch in _batches(rows, ROWS_PER_CHUNK):
        buffer.seek(0)
        buffer.truncate()
        for row in batch:
            line = event_line(row)
            writer.writerows([[csv_cell(_text(line[c])) for c in LINE_COLUMNS]])
        yield buffer.getvalue().encode()


def _text(value: Any) -> Any:
    return bytes(orjson.dumps(value)).decode() if isinstance(value, orjson.Fragment) else value


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise InvalidInput(PARQUET_MISSING) from None
    return pyarrow


class _Sink:
    """A write-only file for pyarrow's ParquetWriter whose bytes are taken out as they come."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.closed = False
        self.position = 0

    def write(self, data) -> int:
        data = bytes(data)
        self.parts.append(data)
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts = []
        return data


def _parquet_chunks(rows: Iterable[tuple]) -> Iterator[bytes]:
    pa = _pyarrow()
    import pyarrow.parquet as pq

    schema = pa.schema([
        ("event_id", pa.string()), ("session_id", pa.string()), ("event_type", pa.string()),
        ("timestamp", pa.timestamp("ms", tz="UTC")), ("model", pa.string()), ("agent_name", pa.string()),
        ("tokens_in", pa.int64()), ("tokens_out", pa.int64()), ("tokens_cache_read", pa.int64()),
        ("tokens_cache_write", pa.int64()), ("tokens_reasoning", pa.int64()), ("duration_ms", pa.float64()),
        ("input_data", pa.string()), ("output_data", pa.string()), ("tool_call", pa.string()),
        ("decision_trace", pa.string()), ("metadata", pa.string()), ("parent_id", pa.string()),
        ("status", pa.string()), ("total_tokens_in", pa.int64()), ("total_tokens_out", pa.int64()),
    ])
    assert tuple(schema.names) == LINE_COLUMNS
    sink = _Sink()
    writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema, compression="zstd")
    try:
        for batch in _batches(rows, ROWS_PER_ROW_GROUP):
            columns: list[list] = [list(c) for c in zip(*batch)]
            ends = [i for i, t in enumerate(columns[_TYPE_AT]) if t == "session_end"]
            session = columns[_SESSION_AT + 1:_SESSION_AT + 4]
            extra = [[None] * len(batch) for _ in range(3)]
            for i in ends:
                for k in range(3):
                    extra[k][i] = session[k][i]
            arrays = []
            for name, values in zip(schema.names, columns[:_SESSION_AT] + extra):
                field = schema.field(name)
                if name == "timestamp":
                    arrays.append(pa.array(values, pa.string()).cast(field.type))
                else:
                    arrays.append(pa.array(values, field.type))
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema), row_group_size=ROWS_PER_ROW_GROUP)
            yield sink.take()
    finally:
        writer.close()
    yield sink.take()
