"""Reading events from files and pipes: JSONL, a JSON array, or `{"events": [...]}`.

Everything streams: JSONL line by line, JSON documents item by item (ijson), so memory
stays bounded whatever the input size. Each record comes with its location (line number
for JSONL, item number for documents) so rejected input can be reported precisely.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

FORMATS = ("auto", "jsonl", "json")


@dataclass(frozen=True)
class Unreadable:
    """A record that could not be parsed at all."""

    message: str


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
    """Skip blank lines; return (line number, first non-blank line) or (n, b'')."""
    line_no = 0
    while True:
        line = reader.readline()
        line_no += 1
        if not line:
            return line_no, b""
        if line.strip():
            return line_no, line


def read_events(reader: CountingReader, fmt: str = "auto") -> Iterator[tuple[int, Any]]:
    """Yield (location, event-or-Unreadable) from `reader`.

    auto: a first line that starts with `[` or does not parse on its own is a JSON document;
    otherwise the input is JSONL (a one-line `{"events": [...]}` is unwrapped).
    """
    line_no, first = _first_line(reader)
    if not first:
        return
    stripped = first.lstrip()
    if fmt == "json" or (fmt == "auto" and stripped[:1] == b"["):
        yield from _read_document(_push_back(reader, first))
        return
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError as exc:
        if fmt == "jsonl":
            yield line_no, Unreadable(f"malformed JSON: {exc}")
            yield from _read_jsonl(reader, line_no)
            return
        yield from _read_document(_push_back(reader, first))
        return
    if type(value) is dict and type(value.get("events")) is list and len(value) == 1:
        yield from enumerate(value["events"], start=1)
        # Anything after a one-line wrapper is read as more JSONL.
    else:
        yield line_no, value
    yield from _read_jsonl(reader, line_no)


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
        if not line.strip():
            continue
        try:
            yield line_no, loads(line)
        except orjson.JSONDecodeError as exc:
            yield line_no, Unreadable(f"malformed JSON: {exc}")


def _read_document(reader: CountingReader) -> Iterator[tuple[int, Any]]:
    """Stream the items of a JSON array or of the `events` array of an object."""
    import ijson

    parser = ijson.parse(reader, use_float=True)
    index = 0
    try:
        prefix, event, value = next(parser)
    except StopIteration:
        return
    except ijson.JSONError as exc:
        yield 1, Unreadable(f"malformed JSON document: {_first(exc)}")
        return
    if event == "start_array":
        path = "item"
    elif event == "start_map":
        path = "events.item"
    else:
        yield 1, Unreadable('expected a JSON array of events or {"events": [...]}')
        return
    builder_items = ijson.items(_replay(prefix, event, value, parser), path, use_float=True)
    try:
        for index, item in enumerate(builder_items, start=1):
            yield index, item
    except ijson.JSONError as exc:
        yield index + 1, Unreadable(f"malformed JSON document after item {index}: {_first(exc)}")


def _replay(prefix, event, value, parser):
    yield prefix, event, value
    yield from parser


def _first(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
