"""Export a session as JSON (spec 2.3) or CSV, streamed chunk by chunk from the cursor.

Validation (format, unknown session) happens before anything is produced, so the caller
can still answer with an error; the body is then a generator of byte chunks that reads the
events as it goes, so a session of any size is never built in memory.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass

import orjson

from obsctl.errors import InvalidInput
from obsctl.jsonutil import loads_column
from obsctl.services.sessions import require_session
from obsctl.services.sessions.conversation import event_messages
from obsctl.services.sessions.fields import reasoning_text, tool_parts
from obsctl.store import Store
from obsctl.timeutil import now_iso

FORMATS = ("json", "csv")
CSV_COLUMNS = ("event_id", "event_type", "timestamp", "model", "tokens_in", "tokens_out",
               "duration_ms", "input_data", "output_data", "tool_name", "tool_input",
               "tool_output", "reasoning")
EVENTS_PER_CHUNK = 200

_FORMULA_START = ("=", "+", "-", "@")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]")


@dataclass
class ExportStream:
    """An export ready to be written: its media type, a download filename, the body chunks."""

    format: str
    media_type: str
    filename: str
    chunks: Iterator[bytes]
    event_count: int


def check_format(fmt: str | None) -> str:
    fmt = "json" if fmt is None else fmt
    if fmt not in FORMATS:
        raise InvalidInput(f"format must be json or csv; got {fmt!r}")
    return fmt


def export_session(store: Store, session_id: str, fmt: str | None = "json") -> ExportStream:
    """Start exporting a session; raises InvalidInput (format) or NotFound before any output."""
    fmt = check_format(fmt)
    session = require_session(store, session_id)
    filename = f"session-{_UNSAFE_FILENAME.sub('_', session_id)}.{fmt}"
    count = session["event_count"]
    if fmt == "csv":
        return ExportStream("csv", "text/csv; charset=utf-8", filename, _csv_chunks(store, session_id), count)
    return ExportStream("json", "application/json", filename, _json_chunks(store, session), count)


def _fragment(text: str | None):
    # Stored JSON columns are already compact JSON: splice them in without re-parsing.
    return None if text is None else orjson.Fragment(text)


def _json_chunks(store: Store, session: dict) -> Iterator[bytes]:
    head = {
        "exported_at": now_iso(),
        "session": {
            "session_id": session["session_id"],
            "agent_name": session["agent_name"],
            "status": session["status"],
            "started_at": session["started_at"],
            "ended_at": session["ended_at"],
            "total_tokens_in": session["total_tokens_in"],
            "total_tokens_out": session["total_tokens_out"],
            "metadata": _fragment(session["metadata"]),
        },
    }
    dumps = orjson.dumps
    # `{"exported_at":..,"session":{..}` then `,"events":[` ... `],"summary":{..}}`.
    yield dumps(head)[:-1] + b',"events":['
    total_events = total_tokens = 0
    total_duration = 0.0
    models: set[str] = set()
    event_types: set[str] = set()
    parts: list[bytes] = []
    for e in store.sessions.iter_session_events(session["session_id"]):
        total_events += 1
        total_tokens += (e["tokens_in"] or 0) + (e["tokens_out"] or 0)
        total_duration += e["duration_ms"] or 0
        if e["model"] is not None:
            models.add(e["model"])
        event_types.add(e["event_type"])
        parts.append(dumps({
            "event_id": e["event_id"],
            "event_type": e["event_type"],
            "timestamp": e["timestamp"],
            "model": e["model"],
            "tokens_in": e["tokens_in"],
            "tokens_out": e["tokens_out"],
            "duration_ms": e["duration_ms"],
            "input_data": _fragment(e["input_data"]),
            "output_data": _fragment(e["output_data"]),
            "tool_call": _fragment(e["tool_call"]),
            "decision_trace": _fragment(e["decision_trace"]),
            "tokens_cache_read": e["tokens_cache_read"],
            "tokens_cache_write": e["tokens_cache_write"],
            "tokens_reasoning": e["tokens_reasoning"],
            "messages": _messages(e["input_data"], e["output_data"]),
        }))
        if len(parts) >= EVENTS_PER_CHUNK:
            yield (b"," if total_events > len(parts) else b"") + b",".join(parts)
            parts = []
    if parts:
        yield (b"," if total_events > len(parts) else b"") + b",".join(parts)
    summary = {
        "total_events": total_events,
        "total_tokens": total_tokens,
        "models_used": sorted(models),
        "event_types": sorted(event_types),
        "total_duration_ms": round(total_duration, 3),
    }
    yield b'],"summary":' + dumps(summary) + b"}"


def _messages(input_text: str | None, output_text: str | None) -> list | None:
    """The event's normalised conversation; only content that may hold messages is parsed."""
    if not any(t is not None and ('"role"' in t or '"messages"' in t or '"tool_calls"' in t)
               for t in (input_text, output_text)):
        return None
    return event_messages(loads_column(input_text), loads_column(output_text))


def csv_cell(value) -> str:
    """A CSV cell: None is empty; text that a spreadsheet would run as a formula gets a `'`."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.match(text):
        return "'" + text
    return text


def _csv_row(e: dict) -> list[str]:
    tool_name, tool_input, tool_output = tool_parts(loads_column(e["tool_call"]))
    return [csv_cell(v) for v in (
        e["event_id"], e["event_type"], e["timestamp"], e["model"], e["tokens_in"],
        e["tokens_out"], e["duration_ms"], e["input_data"], e["output_data"], tool_name,
        tool_input, tool_output, reasoning_text(loads_column(e["decision_trace"])),
    )]


def _csv_chunks(store: Store, session_id: str) -> Iterator[bytes]:
    # RFC 4180: CRLF line ends, fields quoted only when they hold `"`, `,` or line breaks.
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for rows, e in enumerate(store.sessions.iter_session_events(session_id), start=1):
        writer.writerow(_csv_row(e))
        if rows % EVENTS_PER_CHUNK == 0:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode()
