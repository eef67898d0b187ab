"""Retention and database tools over HTTP (`POST /prune`, `GET /db/info`), as declared models.

The checks themselves are services/maintenance (the CLI's and the API's alike); these
declarations state them for the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import UNSET, Meta, Struct, UnsetType

from obsctl.models.common import Timestamp, enum_of
from obsctl.models.ingest import ISO_8601

Age = Annotated[str, Meta(pattern=r"^\s*[0-9]+\s*[mhdw]\s*$", examples=["30d"],
                          description="An age like 30d, 12h, 90m or 2w; more than 0 and at most 36500d")]


class PruneInput(Struct, forbid_unknown_fields=True, kw_only=True):
    """What to prune: sessions whose last activity is older than `older_than`"""

    older_than: Age
    dry_run: Annotated[bool | None, Meta(description="Count what would be deleted; delete nothing")] = None
    cutoff: Annotated[str, Meta(
        pattern=ISO_8601,
        description="Continue a prune that answered complete: false, with the cutoff it "
                    "answered (at or before older_than ago)")] | None = None


class PruneResult(Struct):
    older_than: str
    cutoff: Annotated[Timestamp, Meta(description="Sessions with no activity since this time are deleted")]
    dry_run: bool
    sessions: Annotated[int, Meta(ge=0, description="Sessions deleted (or, in a dry run, that would be)")]
    events: Annotated[int, Meta(ge=0, description="Their events")]
    complete: Annotated[bool, Meta(
        description="false when the request's time ran out first: send it again with this "
                    "cutoff to go on (what was deleted stays deleted)")]


class Integrity(Struct):
    quick_check: Annotated[str, enum_of(("ok", "damaged", "skipped")), Meta(
        description="SQLite's quick_check of every page, or PostgreSQL's checks of the schema; "
                    "skipped with check=false")]
    problems: Annotated[list[str], Meta(description="What the check found, at most 20")]
    checked_at: Timestamp | None


class PriceTable(Struct):
    """The price table the stored costs came from"""

    prices: Annotated[str, Meta(description="`genai-prices X.Y.Z`, with `+ overrides sha256:...` when "
                                            "OBSCTL_PRICES was set; `none` for events stored before costs were")]
    mixed: Annotated[bool, Meta(description="Some costs came from another price table: run `obsctl db reprice`")]
    updated_at: Annotated[str, Meta(description="When costs were last written")]
    repriced_at: Annotated[str | None, Meta(description="When `obsctl db reprice` last ran")]


class RepriceResult(Struct):
    """What `obsctl db reprice` (POST /db/reprice) recosted"""

    prices: Annotated[str, Meta(description="The price table used (see PriceTable.prices)")]
    models: Annotated[int, Meta(ge=0, description="Models with a known price")]
    unpriced_models: Annotated[list[str], Meta(description="Models without a known price: their calls stay unpriced")]
    events: Annotated[int, Meta(ge=0, description="Events of those models recosted")]
    sessions: Annotated[int, Meta(ge=0, description="Sessions whose cost_usd, unpriced_calls and cache and "
                                                    "reasoning token totals were recounted")]
    cache_counts_recounted: Annotated[int, Meta(
        ge=0, description="Spans stored before cache and reasoning tokens were, whose counts of them were read "
                          "from their kept span attributes (once: later reprices find none)")]


class DbInfo(Struct, kw_only=True):
    """The database the server works on. SQLite answers `path` and the journal and page
    figures; PostgreSQL answers `url` (without its password), the server version, database
    and schema"""

    backend: Annotated[str, enum_of(("sqlite", "postgresql"))]
    size_bytes: Annotated[int, Meta(ge=0, description="On disk, with the WAL (SQLite), or the database's size")]
    schema_version: Annotated[int, Meta(ge=0)]
    tables: Annotated[dict[str, int | None], Meta(
        description="Rows per table (null: uncountable in a damaged file)")]
    integrity: Integrity
    prices: Annotated[PriceTable | None, Meta(
        description="The price table of the stored costs; null before any cost was stored")] = None
    path: str | UnsetType = UNSET
    journal_mode: str | UnsetType = UNSET
    page_size: int | UnsetType = UNSET
    page_count: int | UnsetType = UNSET
    freelist_count: int | UnsetType = UNSET
    sqlite_version: str | UnsetType = UNSET
    url: str | UnsetType = UNSET
    postgresql_version: str | UnsetType = UNSET
    database: str | UnsetType = UNSET
    schema: str | UnsetType = UNSET
