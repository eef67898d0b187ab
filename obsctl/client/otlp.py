"""Remote OTLP file ingest: not offered yet. `POST /v1/traces` answers only how many spans it
rejected, not how many it stored or already held, so the summary `obsctl ingest` prints could
not be made the same as on a database."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import IO, Any

from obsctl.client.http import Client
from obsctl.errors import InvalidInput


def ingest_otlp_stream(client: Client, reader: IO[bytes], *, strict: bool = False,
                       max_future: timedelta | None = None, on_reject: Callable[..., Any] | None = None,
                       on_batch: Callable[..., Any] | None = None) -> None:
    raise InvalidInput(f"--format otlp-json cannot be sent to a server yet: ingest the file on a "
                       f"database (--db), or point the exporter at {client.url('/v1/traces')}")
