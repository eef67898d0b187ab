"""Decode an OTLP/HTTP export request in either wire format into span records.

Protobuf decoding lives in `wire`, JSON decoding in `json_format` (which builds on `wire`'s
records); this module chooses between them, so neither has to import the other's caller.
"""

from __future__ import annotations

from obsctl.services.otlp.json_format import decode_json_body
from obsctl.services.otlp.wire import PROTOBUF, RejectedSpan, SpanRecord, decode_protobuf


def decode_request(body: bytes, fmt: str, first_index: int = 0,
                   max_spans: int | None = None) -> list[SpanRecord | RejectedSpan]:
    """Decode an export request body in the given wire format (`wire.PROTOBUF` or `wire.JSON`;
    `first_index` numbers JSON's resourceSpans, see json_format.decode_json_request); more
    than `max_spans` spans is a PayloadTooLarge."""
    if fmt == PROTOBUF:
        return decode_protobuf(body, max_spans)
    return decode_json_body(body, first_index, max_spans)
