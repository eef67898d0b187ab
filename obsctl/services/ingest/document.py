"""The streamed reader of one JSON document of events: an array, `{"events": [...]}` or one
event object, item by item (ijson), so memory stays bounded whatever the document's size.

Each item comes with its number; what cannot be read is an `Unreadable` with the reason
(malformed JSON after item N, bytes that are not UTF-8 on line L, an OTLP request, keys
next to "events").
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from obsctl.services.ingest.shape import show_field


@dataclass(frozen=True)
class Unreadable:
    """A record that could not be parsed at all (a JSONL line or a document's item)."""

    message: str


class Reader(Protocol):
    """What the document readers take: a binary stream's read (a file, stdin, or a wrapper
    of either)."""

    def read(self, size: int = -1, /) -> bytes: ...


class Utf8Checked:
    """A binary reader that notes the line of the first bytes that are not UTF-8 text, as
    they go by: the JSON parser fails there but would only say "invalid bytes"."""

    def __init__(self, reader: Reader):
        self._reader = reader
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._line = 1
        self.bad_line: int | None = None

    def read(self, size: int = -1) -> bytes:
        data = self._reader.read(size)
        if self.bad_line is None and (data or size != 0):
            pending = len(self._decoder.getstate()[0])
            try:
                self._decoder.decode(data, not data)
            except UnicodeDecodeError as exc:
                self.bad_line = self._line + data.count(b"\n", 0, max(exc.start - pending, 0))
            self._line += data.count(b"\n")
        return data


_STARTS = ("start_map", "start_array")
_ENDS = ("end_map", "end_array")


def read_document(reader: Reader) -> Iterator[tuple[int, Any]]:
    """Stream the items of a JSON array, or of the `events` array of an object, or the one
    event a document holds."""
    import ijson

    checked = Utf8Checked(reader)
    parser = ijson.parse(checked, use_float=True)
    index = 0
    try:
        prefix, event, value = next(parser)
        if event == "start_array":
            for index, item in enumerate(ijson.items(_replay(prefix, event, value, parser), "item",
                                                     use_float=True), start=1):
                yield index, item
        elif event == "start_map":
            for index, item in _read_object(parser):
                yield index, item
        else:
            yield 1, Unreadable('expected a JSON array of events, {"events": [...]} or one event object')
            return
        next(parser, None)  # only to raise on anything after the document
    except StopIteration:
        return
    except ijson.JSONError as exc:
        after = f" after item {index}" if index else ""
        if checked.bad_line is not None:
            yield index + 1, Unreadable(f"line {checked.bad_line}: not UTF-8 text{after and ' (' + after.strip() + ')'}")
        else:
            yield index + 1, Unreadable(f"malformed JSON document{after}: {parser_message(exc)}")


def _read_object(parser) -> Iterator[tuple[int, Any]]:
    """The top-level object of a document (its start_map already read).

    `{"events": [...]}` streams its items; any other key next to `events` is an error. An
    object without an `events` array is one event (validation tells whether it is one).
    """
    import ijson

    fields: dict[str, Any] = {}
    extra: list[str] = []
    index = 0
    streamed = False
    for prefix, event, key in parser:
        if event == "end_map":  # of the top-level object
            break
        prefix, event, value = next(parser)
        if key == "events" and event == "start_array" and not streamed and not fields:
            streamed = True
            array = _until_end(prefix, event, value, parser, "events")
            for index, item in enumerate(ijson.items(array, "events.item", use_float=True), start=1):
                yield index, item
        elif key == "resourceSpans":
            yield index + 1, Unreadable("this is OTLP JSON (resourceSpans), not obsctl events; "
                                        "use --format otlp-json (or auto)")
            return
        elif streamed or (key == "events" and event == "start_array"):
            if key == "events" and not streamed:
                # Other keys came first: a wrapper with unknown keys, rejected before any item.
                yield 1, Unreadable(f'unknown top-level keys next to "events": {_shown(fields)}; '
                                    f'a {{"events": [...]}} wrapper has no other key')
                return
            extra.append(key)
            _skip(event, parser)
        else:
            fields[key] = _build(event, value, parser)
    if streamed:
        if extra:
            yield index + 1, Unreadable(
                f'unknown top-level keys after the "events" array: {_shown(extra)}; '
                f'a {{"events": [...]}} wrapper has no other key')
        return
    yield 1, fields


def _shown(keys) -> str:
    keys = list(keys)
    text = ", ".join(show_field(k) for k in keys[:5])
    return text + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")


def _until_end(prefix, event, value, parser, path: str):
    """The parse events of one array or object at `path`, its start given, its end included."""
    yield prefix, event, value
    end = "end_array" if event == "start_array" else "end_map"
    for item in parser:
        yield item
        if item[1] == end and item[0] == path:
            return


def _build(event: str, value: Any, parser) -> Any:
    """The value that starts with (event, value), built from the parse events."""
    if event not in _STARTS:
        return value
    import ijson

    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for _, event, value in parser:
        builder.event(event, value)
        if event in _STARTS:
            depth += 1
        elif event in _ENDS:
            depth -= 1
            if depth == 0:
                return builder.value
    return builder.value


def _skip(event: str, parser) -> None:
    if event not in _STARTS:
        return
    depth = 1
    for _, event, _value in parser:
        if event in _STARTS:
            depth += 1
        elif event in _ENDS:
            depth -= 1
            if depth == 0:
                return


def _replay(prefix, event, value, parser):
    yield prefix, event, value
    yield from parser


def parser_message(exc: Exception) -> str:
    """The first line of a parser error, as text (yajl gives bytes)."""
    text = exc.args[0] if exc.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    lines = str(text).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
