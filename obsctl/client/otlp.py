"""Remote OTLP file ingest: the use case of `obsctl.services.otlp.file` answered by a server.

The file is read here as it is read locally (the same lines and elements, the same problems
for the ones that are no export request); each request is posted to `POST /v1/traces` as OTLP
JSON with `?summary=true`, whose answer carries what the local summary needs: spans stored,
duplicates, sessions and each rejected span, located in the file as locally. Spans are stored
idempotently on (trace id, span id), so a request sent again stores nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import IO, Any

import orjson

from obsctl.client.http import Client
from obsctl.errors import InvalidInput
from obsctl.services.ingest.stream import StreamSummary
from obsctl.services.otlp.file import NotARequest, read_requests


def ingest_otlp_stream(client: Client, reader: IO[bytes], *, strict: bool = False,
                       max_future: timedelta | None = None,
                       on_reject: Callable[[int, str], None] = lambda loc, msg: None,
                       on_batch: Callable[[StreamSummary], None] = lambda summary: None) -> StreamSummary:
    """`max_future` is unused: the server applies its own OBSCTL_MAX_FUTURE_SKEW."""
    if strict:
        # All or nothing needs one transaction over the whole file; a server stores each
        # request on its own.
        raise InvalidInput("--strict cannot be used for --format otlp-json against a server: ingest "
                           "the file on a database (--db), or drop --strict")
    summary = StreamSummary()
    for location, decoded, request in read_requests(reader):
        if isinstance(decoded, NotARequest) or request is None:
            summary.rejected += 1
            on_reject(location, str(decoded))
            continue
        document, first_index = request
        body = document if type(document) is bytes else orjson.dumps(document, default=_number)
        answer = client.decode(client.request(
            "POST", "/v1/traces", params={"summary": "true", "first_index": first_index}, data=body,
            headers={"Content-Type": "application/json"}, idempotent=True))
        told = answer["obsctl"]
        summary.events += told["spans"] - len(told["rejected"])
        summary.stored += told["stored"]
        summary.duplicates += told["duplicates"]
        summary.rejected += len(told["rejected"])
        summary.session_ids.update(told["sessions"])
        for rejected in told["rejected"]:
            on_reject(location, f"span {rejected['span']}: {rejected['error']}")
        on_batch(summary)
    return summary


def _number(value: Any) -> Any:
    """ijson reads a number written with a fraction or an exponent as a Decimal; a JSON parser
    (the server's) reads the same text as a float."""
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON")
