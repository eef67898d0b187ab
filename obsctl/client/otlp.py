"""Remote OTLP file ingest: not offered yet. `POST /v1/traces` answers only how many spans it
rejected, not how many it stored or already held, so the summary `obsctl ingest` prints could
not be made the same as on a database."""

from __future__ import annotations

from typing import Any

from obsctl.client.http import Client
from obsctl.errors import InvalidInput


def ingest_otlp_stream(client: Client, reader: Any, **_: Any) -> None:
    raise InvalidInput(f"--format otlp-json cannot be sent to a server yet: ingest the file on a "
                       f"database (--db), or point the exporter at {client.url('/v1/traces')}")
