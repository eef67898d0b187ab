"""`GET /health`, as a declared model."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from obsctl.models.common import Timestamp, enum_of


class DatabaseHealth(Struct):
    backend: Annotated[str, enum_of(("sqlite", "postgresql")), Meta(description="the store in use")]
    reachable: Annotated[bool, Meta(
        description="PostgreSQL answered a query just now (always true for the embedded SQLite file)")]
    quick_check: Annotated[str, enum_of(("ok", "skipped", "not run")), Meta(
        description="the integrity check at `obsctl serve` start (a damaged database is refused)")]
    checked_at: Timestamp | None
    writes_waiting: Annotated[int, Meta(ge=0, description="writes waiting in the writer queue now")]
    error: Annotated[str | None, Meta(description="why the database is unreachable")] = None


class RedisHealth(Struct):
    reachable: Annotated[bool, Meta(description="the rate-limit storage answered just now")]
    error: str | None = None


class Health(Struct):
    status: Annotated[Literal["ok", "unavailable"], Meta(
        description="unavailable (HTTP 503) when the database or the rate-limit Redis cannot be reached")]
    timestamp: Timestamp
    version: str
    database: DatabaseHealth
    redis: Annotated[RedisHealth | None, Meta(
        description="present when OBSCTL_RATELIMIT_STORAGE_URI is a redis:// URL")] = None


