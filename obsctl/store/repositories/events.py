"""The repositories of the events and what is derived as they are written: ingest, OTLP, search,
costs, the copy between stores and maintenance. See the package's docstring."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from obsctl.models.sessions import EventSelection


class EventsRepository(Protocol):
    """Events across sessions: in bulk (the export) and in arrival order (the follow)."""

    def iter_events(self, selection: EventSelection) -> Iterator[tuple]:
        """The selected events in time order (ties in arrival order), streamed in batches."""

    def events_after(self, position: str | None, selection: EventSelection,
                     limit: int) -> list[tuple[str, tuple]]:
        """(position, row) of the first `limit` selected events stored after `position`."""

    def latest_events(self, selection: EventSelection,
                      count: int) -> tuple[str, list[tuple[str, tuple]]]:
        """The position of the last stored event, and the last `count` selected events."""

class IngestRepository(Protocol):
    """Writing events and maintaining session totals (one transaction per batch)."""

    def existing_event_ids(self, event_ids: Sequence[str]) -> set[str]:
        """The subset of `event_ids` already stored."""

    def write_batch(
        self,
        rows: Sequence[tuple],
        session_deltas: Iterable[Sequence],
        starts: Iterable[tuple],
        ends: Iterable[tuple],
        totals: dict[tuple, list],
        *,
        skip_existing: bool = False,
        prices: str | None = None,
    ) -> int:
        """Write one validated batch; returns how many event rows were inserted."""

class OtlpRepository(Protocol):
    """OTLP trace ingest: trace-to-session links and session fields from resource attributes."""

    def trace_sessions(self, trace_ids: Sequence[str]) -> dict[str, str]:
        """The remembered session of each of `trace_ids` that has one."""

    def link_traces(self, links: Iterable[tuple[str, str]]) -> None:
        """Remember (trace_id, session_id) pairs; the first session linked to a trace stays."""

    def move_trace_events(self, trace_id: str, from_session: str, to_session: str) -> int:
        """Move the events of `trace_id` stored in `from_session` to `to_session`."""

    def fill_session_metadata(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Set (metadata_json, session_id) on sessions that have no metadata yet."""

    def session_agents(self, session_ids: Sequence[str]) -> dict[str, str]:
        """The agent name of each of `session_ids` that is stored."""

    def set_session_agents(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Set (agent_name, session_id)."""

    def lock_traces(self, trace_ids: Sequence[str]) -> None:
        """Make requests settling the token usage of these traces take turns (in a transaction)."""

    def model_call_children(self, parent_ids: Sequence[str]) -> list[tuple]:
        """(parent_id, event_type, metadata) of stored llm_call or error events whose parent
        is one of `parent_ids`."""

    def failed_children(self, parent_ids: Sequence[str]) -> set[str]:
        """The parent span event ids with a stored child that failed, or that failed because of
        its own child."""

    def counted_usage(self, event_ids: Sequence[str]) -> list[tuple]:
        """(event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, metadata)
        of the stored events among `event_ids` whose token counts are counted."""

    def retract_usage(self, rows: Sequence[tuple]) -> None:
        """Stop counting the usage of events read by counted_usage (with new metadata): their
        token columns become NULL, the counts leave the session totals and the rollup."""


    def event_contents(self, event_ids: Sequence[str]) -> dict[str, tuple]:
        """(input_data, output_data, metadata, session_id), the objects parsed, of each stored one."""

    def set_event_contents(self, rows: Iterable[tuple]) -> None:
        """Set (input_data_json, output_data_json, metadata_json, event_id)."""

    def span_log_events(self, span_event_ids: Sequence[str]) -> dict[str, list]:
        """Events of GenAI log records stored before their span (ids `<span event id>:<key>`),
        per span event id, as (event_id, input_data, output_data, metadata) in event id order."""

class SearchRepository(Protocol):
    """Full-text search over what events said (input, output, tool call, reasoning)."""

    def search_events(self, terms: list[tuple[str, str]], selection: EventSelection, *,
                      sort: str, limit: int, time_budget: float) -> list[dict]:
        """Events matching every term (("word"|"phrase"|"prefix", text)) and the selection,
        newest first (sort "time") or best first (sort "rank"), at most `limit`; each with
        event_id, session_id, agent_name, event_type, timestamp, and the `field` that matched
        with its `snippet` (matched words between MARK_START and MARK_END of the store), made
        from a window of the field (store/search_text.py). QueryTimeout when the
        search's statements outlast `time_budget` seconds."""

    def index_pending(self, limit: int = 5_000) -> int:
        """Index up to `limit` of the events stored since the index was last complete (inside
        a write transaction); how many events it moved over, 0 when it is complete (always on
        a store whose index is kept by the ingest transaction itself)."""

    def pending(self) -> int:
        """How many stored events the index has not reached yet."""


class CostsRepository(Protocol):
    """The price table of the stored costs, and costing the stored events again."""

    def price_table(self) -> dict | None:
        """{prices, mixed, updated_at, repriced_at}; None before any event was costed."""

    def stored_models(self) -> list[str]:
        """The models named by stored events, in order."""

    def set_model_costs(self, model: str, rates: tuple | None) -> int:
        """Recost the events of `model` at `rates` (input, cache read, cache write, output and
        reasoning per token; NULL costs when None); returns how many."""

    def unsplit_usage(self, after_id: int, limit: int) -> list[tuple]:
        """(id, event_id, tokens_in, tokens_out, metadata) of up to `limit` counted events after
        `after_id` with no cache or reasoning counts whose kept span attributes may hold some."""

    def set_usage_parts(self, rows: list[tuple]) -> None:
        """Set (cache read, cache write, reasoning, event_id) of some events."""

    def recount_session_costs(self) -> int:
        """Every session's cost_usd, unpriced_calls and cache and reasoning token totals again
        from its events; returns how many."""

    def recount_rollup_costs(self) -> None:
        """The event_stats rollup (with its costs) again from the events."""

    def mark_repriced(self, prices: str) -> None:
        """Every stored cost now comes from the price table `prices`."""

class TransferRepository(Protocol):
    """Whole tables in and out, for `obsctl db copy` (obsctl/store/tables.py lists them)."""

    def tables(self) -> list[str]:
        """The tables a copy moves, in the order they are copied."""

    def table_rows(self, table: str, batch_size: int) -> Iterator[list[tuple]]:
        """The rows of `table` (columns as tables.py lists them) in the order they were written."""

    def row_count(self, table: str) -> int:
        """Rows in `table`."""

    def is_empty(self) -> bool:
        """No row in any copied table."""

    def insert_rows(self, table: str, rows: Sequence[tuple]) -> None:
        """Append rows read by `table_rows` (inside the copy's transaction)."""

    def finish_copy(self) -> None:
        """Recompute the rollups from the copied rows (inside the copy's transaction)."""

    def session_totals(self) -> dict:
        """Sums over all sessions (sessions, events, errors, tokens) for the copy's verification."""

class MaintenanceRepository(Protocol):
    """Retention and database administration: prune, info, integrity check, backup."""

    def count_prunable(self, cutoff: str) -> tuple[int, int]:
        """(sessions, events) whose last activity is before `cutoff`."""

    def prune_batch(self, cutoff: str, batch_sessions: int, batch_events: int | None = None) -> tuple[int, int]:
        """Delete up to `batch_sessions` inactive sessions and their events in one transaction."""

    def table_counts(self, *, damaged: bool = False) -> dict[str, int | None]:
        """Rows per table; in a `damaged` store a table that cannot be counted is None."""

    def pragmas(self, path: Path | None = None) -> dict:
        """The journal mode, page size and counts and engine version `obsctl db info` reports."""

    def quick_check(self, max_problems: int = 20) -> list[str]:
        """The problems a quick integrity check finds (at most `max_problems`), [] if none."""

    def backup_to(self, dest: Path) -> None:
        """A consistent copy of the live database at `dest` (writers keep going)."""
