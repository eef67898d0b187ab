"""`GET /health`, as a declared model."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from obsctl.models.common import Timestamp, one_of


class DatabaseHealth(Struct):
    quick_check: Annotated[one_of(("ok", "skipped", "not run")), Meta(
        description="SQLite's quick_check at `obsctl serve` start (a damaged database is refused)")]
    checked_at: Timestamp | None
    writes_waiting: Annotated[int, Meta(ge=0, description="writes waiting in the writer queue now")]


class Health(Struct):
    status: Literal["ok"]
    timestamp: Timestamp
    version: str
    database: DatabaseHealth


