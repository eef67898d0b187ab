"""Reading events from files and pipes: JSONL, a JSON array, `{"events": [...]}`, or one
event object (possibly pretty-printed).

Everything streams: JSONL line by line, JSON documents item by item (ijson, document.py),
so memory stays bounded whatever the input size. Each record comes with its location (line number
for JSONL, item number for documents) so rejected input can be reported precisely.
A UTF-8 byte order mark at the start is skipped; bytes that are not UTF-8 are reported
as such. `detect_format` tells obsctl events from OTLP JSON by content.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from typing import IO, Any

import orjson

from obsctl.errors import InvalidInput
from obsctl.services.ingest import EVENT_FIELDS
from obsctl.services.ingest.document import Unreadable, read_document  # ijson only when reading one

FORMATS = ("auto", "jsonl", "json")
BOM = codecs.BOM_UTF8
# How much of a document is looked at to find its first key.
SNIFF_LINES = 64
SNIFF_BYTES = 64 * 1024
_FIRST_KEY = re.compile(rb'\s*\{\s*"((?:[^"\\]|\\.)*)"\s*:')


class CountingReader:
    """Wraps a binary stream, counting the bytes read (for progress on pipes too)."""

    def __init__(self, stream: IO[bytes], prefix: bytes = b""):
        self._stream = stream
        self._prefix = prefix
        self.bytes_read = 0

    def read(self, size: int = -1) -> bytes:
        if self._prefix:
            if size is None or size < 0:
                data, self._prefix = self._prefix + self._stream.read(), b""
            else:
                data, self._prefix = self._prefix[:size], self._prefix[size:]
        else:
            data = self._stream.read(size)
        self.bytes_read += len(data)
        return data

    def readline(self) -> bytes:
        if self._prefix:
            head, sep, rest = self._prefix.partition(b"\n")
            if sep:
                self._prefix = rest
                line = head + sep
            else:
                self._prefix = b""
                line = head + self._stream.readline()
        else:
            line = self._stream.readline()
        self.bytes_read += len(line)
        return line


def _first_line(reader: CountingReader) -> tuple[int, bytes]:
    """Skip blank lines; return (line number, first non-blank line) or (n, b'').

    A byte order mark at the start of the input (after blank lines, if any) is dropped.
    """
    line_no = 0
    while True:
        line = reader.readline()
        if line.startswith(BOM):
            line = line[len(BOM):]
        line_no += 1
        if not line:
            return line_no, b""
        if line.strip():
            return line_no, line


def detect_format(reader: CountingReader, fmt: str, label: str) -> str:
    """The format to read `reader` with: `fmt`, or for `auto` OTLP JSON (`otlp-json`) when
    the content is an OTLP export request (a `resourceSpans` key). Nothing is consumed but a
    leading byte order mark. Content that is clearly the other kind is an error:
    `--format otlp-json` on obsctl events, `jsonl`/`json` on OTLP JSON."""
    kind = _sniff(reader)
    if kind == "otlp" and fmt in ("jsonl", "json"):
        raise InvalidInput(f"{label} is OTLP JSON (it has resourceSpans), not obsctl events; "
                           f"use --format otlp-json (or auto)")
    if kind == "events" and fmt == "otlp-json":
        raise InvalidInput(f"{label} holds obsctl events, not OTLP JSON (no resourceSpans); "
                           f"use --format auto, jsonl or json")
    if fmt == "auto" and kind == "otlp":
        return "otlp-json"
    return fmt


def _sniff(reader: CountingReader) -> str:
    """`otlp`, `events`, `empty` or `unknown`, from the first record (or first key of a
    document); every line read is pushed back."""
    lines = []
    line_no, first = _first_line(reader)
    consumed = b"\n" * (line_no - 1)  # blank lines before the first record keep its number
    if not first:
        _push_back(reader, consumed)
        return "empty"
    kind = "unknown"
    stripped = first.lstrip()
    if stripped[:1] == b"[":
        kind = "events"
    else:
        try:
            value = orjson.loads(first)
        except orjson.JSONDecodeError as exc:
            if begins_document(first, exc):
                # A document: find its first key in the next few lines.
                lines.append(first)
                size = len(first)
                match = _FIRST_KEY.match(first)
                while match is None and len(lines) < SNIFF_LINES and size < SNIFF_BYTES:
                    line = reader.readline()
                    if not line:
                        break
                    lines.append(line)
                    size += len(line)
                    match = _FIRST_KEY.match(b"".join(lines))
                if match is not None:
                    kind = _kind_of_keys([match.group(1).decode("utf-8", "replace")])
                first = b"".join(lines)
        else:
            if type(value) is dict:
                kind = _kind_of_keys(value)
            elif type(value) is list:
                kind = "events"
    _push_back(reader, consumed + first)
    return kind


def _kind_of_keys(keys) -> str:
    if "resourceSpans" in keys:
        return "otlp"
    if "events" in keys or any(key in EVENT_FIELDS for key in keys):
        return "events"
    return "unknown"


def read_events(reader: CountingReader, fmt: str = "auto") -> Iterator[tuple[int, Any]]:
    """Yield (location, event-or-Unreadable) from `reader`.

    auto: a first line that starts with `[`, or that is the start of a longer JSON value,
    begins a JSON document (an array, `{"events": [...]}` or one event object); otherwise the
    input is JSONL (a one-line `{"events": [...]}` is unwrapped).
    """
    line_no, first = _first_line(reader)
    if not first:
        return
    stripped = first.lstrip()
    if fmt == "json" or (fmt == "auto" and stripped[:1] == b"["):
        yield from read_document(_push_back(reader, first))
        return
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError as exc:
        if fmt == "auto" and begins_document(first, exc):
            yield from read_document(_push_back(reader, first))
            return
        yield line_no, Unreadable(line_problem(first, exc))
        yield from _read_jsonl(reader, line_no)
        return
    if type(value) is dict and type(value.get("events")) is list and len(value) == 1:
        yield from enumerate(value["events"], start=1)
        # Anything after a one-line wrapper is read as more JSONL.
    else:
        # Anything else, a wrapper with other keys included, is validated as an event.
        yield line_no, value
    yield from _read_jsonl(reader, line_no)


def begins_document(line: bytes, exc: orjson.JSONDecodeError) -> bool:
    """Whether `line` is the beginning of a longer (pretty-printed) document: parsing stopped
    at its end, right after an opening bracket, a comma or a colon. A JSON Lines record cut
    short stops elsewhere (`{"a": 1`), and is one bad line, not a document."""
    return exc.msg.startswith("unexpected end of data") and line.rstrip()[-1:] in (b"{", b"[", b",", b":")


def line_problem(line: bytes, exc: orjson.JSONDecodeError) -> str:
    """What is wrong with one line: not UTF-8 (with where), or the JSON error and its column."""
    if "UTF-8" in exc.msg:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as bad:
            column = len(line[:bad.start].decode("utf-8")) + 1
            return f"not UTF-8 text (byte 0x{line[bad.start]:02x} at column {column})"
    # An error at the end of the data is reported by orjson on the line after the newline.
    column = exc.colno if exc.lineno == 1 else len(line.rstrip(b"\r\n").decode("utf-8", "replace")) + 1
    return f"malformed JSON at column {column}: {exc.msg}"


def _push_back(reader: CountingReader, prefix: bytes) -> CountingReader:
    """Push `prefix` back in front of the reader (the line read while sniffing)."""
    reader.bytes_read -= len(prefix)
    reader._prefix = prefix + reader._prefix
    return reader


def _read_jsonl(reader: CountingReader, line_no: int) -> Iterator[tuple[int, Any]]:
    loads = orjson.loads
    readline = reader.readline
    while True:
        line = readline()
        if not line:
            return
        line_no += 1
        if line.isspace():  # as `not line.strip()` (line is not empty), without a copy
            continue
        try:
            yield line_no, loads(line)
        except orjson.JSONDecodeError as exc:
            yield line_no, parse_line_again(line, exc)


def parse_line_again(line: bytes, exc: orjson.JSONDecodeError) -> Any:
    """A line that did not parse: one with a byte order mark (files joined with `cat`) is
    parsed without it; otherwise the reason."""
    if line.startswith(BOM):
        try:
            return orjson.loads(line[len(BOM):])
        except orjson.JSONDecodeError as again:
            exc = again
            line = line[len(BOM):]
    return Unreadable(line_problem(line, exc))
