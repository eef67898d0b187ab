"""Ingest of OTLP JSON files (`obsctl ingest --format otlp-json`).

A file holds either JSON Lines of export requests, as the OpenTelemetry Collector's file
exporter writes them (one `{"resourceSpans": [...]}` per line), or one export request
document, possibly pretty-printed and large; that one is streamed one `resourceSpans`
element at a time, so memory stays bounded. Each line or element is stored as one export
request would be (services/otlp.py); spans of a trace split over several of them still end
up in one session, through the remembered trace-to-session link. A line or document that is
not an export request (no `resourceSpans` key) is rejected, not read as an empty one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import IO

import orjson

from obsctl.errors import InvalidInput
from obsctl.services.ingest import DEFAULT_MAX_FUTURE_SKEW
from obsctl.services.ingest.document import Reader, Utf8Checked, parser_message
from obsctl.services.ingest.source import (
    BOM,
    Unreadable,
    begins_document,
    line_problem,
    parse_line_again,
)
from obsctl.services.ingest.stream import StreamSummary
from obsctl.services.otlp import ingest_spans
from obsctl.services.otlp.json_format import decode_json_request, decode_json_resource_spans
from obsctl.services.search_index import catch_up
from obsctl.store import Store


class NotARequest(Exception):
    """A line or element that is no export request; its message says why."""


# What reading a file yields for each export request in it: where it is (line or element
# number), its spans decoded (or why it cannot be), and the request as it would be sent to a
# server: the JSON line as it is (bytes), or a document's element as {"resourceSpans": [it]}
# (a dict, whose numbers ijson read as int and Decimal), with that element's index.
Part = tuple[int, "list | NotARequest", "tuple[bytes | dict, int] | None"]


def ingest_otlp_stream(
    store: Store,
    reader: IO[bytes],
    *,
    strict: bool = False,
    max_future: timedelta | None = DEFAULT_MAX_FUTURE_SKEW,
    on_reject: Callable[[int, str], None] = lambda loc, msg: None,
    on_batch: Callable[[StreamSummary], None] = lambda summary: None,
) -> StreamSummary:
    """Ingest every export request in `reader`; rejected spans are reported with the line
    (JSON Lines) or `resourceSpans` element number (one document) they came from.

    With `strict`, everything is one transaction and nothing is stored if anything is bad.
    """
    summary = StreamSummary()

    def run() -> None:
        for location, decoded, _ in read_requests(reader):
            if isinstance(decoded, NotARequest):
                summary.rejected += 1
                on_reject(location, str(decoded))
                if strict:
                    return
                continue
            result = ingest_spans(store, decoded, max_future=max_future)
            summary.events += result.used
            summary.stored += result.stored
            summary.duplicates += result.duplicates
            summary.rejected += result.rejected_spans
            summary.session_ids |= result.sessions
            for label, why in result.rejected:
                on_reject(location, f"span {label}: {why}")
            if strict and summary.rejected:
                return
            on_batch(summary)

    if not strict:
        run()
    else:
        with store.transaction():
            run()
            if summary.rejected:
                # Leaving the block by an exception rolls the whole file back.
                raise InvalidInput(f"{summary.rejected} span(s) or request(s) rejected; "
                                   f"--strict: nothing was stored")
    catch_up(store)  # the file's events are searchable once it ends (services/search_index.py)
    return summary


def read_requests(reader: IO[bytes]) -> Iterator[Part]:
    """(location, decoded spans or NotARequest, request to send) for each request in the file."""
    line_no = 0
    while True:
        line = reader.readline()
        if line.startswith(BOM):
            line = line[len(BOM):]
        line_no += 1
        if not line:
            return
        if line.strip():
            break
    try:
        first = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if begins_document(line, exc):
            # Not one request per line: a single (pretty-printed) document.
            yield from _read_document(_Prefixed(line, reader))
            return
        yield line_no, NotARequest(line_problem(line, exc)), None
    else:
        yield line_no, _request(first), (line, 0)
    for line in iter(reader.readline, b""):
        line_no += 1
        if not line.strip():
            continue
        try:
            document = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            document = parse_line_again(line, exc)
            if type(document) is Unreadable:
                yield line_no, NotARequest(document.message), None
                continue
            yield line_no, _request(document), (document, 0)
            continue
        yield line_no, _request(document), (line, 0)


_NOT_A_REQUEST = "not an OTLP export request: expected an object with a resourceSpans key"


def _request(document) -> list | NotARequest:
    if type(document) is not dict or "resourceSpans" not in document:
        return NotARequest(_NOT_A_REQUEST)
    return _decode(decode_json_request, document)


def _decode(decode: Callable[..., list], *args) -> list | NotARequest:
    try:
        return decode(*args)
    except InvalidInput as exc:
        return NotARequest(exc.message)


def _read_document(reader: Reader) -> Iterator[Part]:
    import ijson

    index = 0
    checked = Utf8Checked(reader)
    top_keys: list[str] = []

    def parse_events():
        for item in ijson.parse(checked):
            if not item[0] and item[1] == "map_key":
                top_keys.append(item[2])
            yield item

    try:
        # Integers stay integers (nanosecond times do not fit a float); decimals are Decimal.
        for index, item in enumerate(ijson.items(parse_events(), "resourceSpans.item"), start=1):
            where = f"resourceSpans[{index - 1}]"
            yield index, _decode(decode_json_resource_spans, item, where), ({"resourceSpans": [item]}, index - 1)
    except ijson.JSONError as exc:
        if checked.bad_line is not None:
            yield index + 1, NotARequest(f"line {checked.bad_line}: not UTF-8 text"), None
        else:
            yield index + 1, NotARequest(f"malformed JSON document: {parser_message(exc)}"), None
        return
    if "resourceSpans" not in top_keys:
        yield 1, NotARequest(_NOT_A_REQUEST), None


class _Prefixed:
    """A reader that returns `prefix` (the line read while sniffing) before the rest."""

    def __init__(self, prefix: bytes, reader: IO[bytes]):
        self._prefix = prefix
        self._reader = reader

    def read(self, size: int = -1) -> bytes:
        if not self._prefix:
            return self._reader.read(size)
        if size is None or size < 0:
            data, self._prefix = self._prefix + self._reader.read(), b""
        else:
            data, self._prefix = self._prefix[:size], self._prefix[size:]
        return data
