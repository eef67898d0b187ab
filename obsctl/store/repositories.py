"""The repositories a store hands out, one Protocol per area: what services may call on
`store.<area>`, whatever the backend.

Each method is the backend's area function without the connection it runs on (the SQLite
store binds `obsctl/store/sqlite/<area>.py`'s functions to its connection, see
`sqlite_store.Repository`). A second backend implements the same methods with the same
parameters; tests/obsctl/test_store_contract.py holds every backend to them and checks that
services call nothing undeclared here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from obsctl.models.sessions import EventSelection, SessionFilter


class AlertsRepository(Protocol):
    """Alert rules and alert events (fired alerts)."""

    def insert_rule(self, rule: dict) -> None:
        """Insert a new rule."""

    def get_rule(self, rule_id: str) -> dict | None:
        """One rule, or None."""

    def list_rules(self, *, enabled_only: bool = False) -> list[dict]:
        """Rules in creation order, only the enabled ones if `enabled_only`."""

    def update_rule(self, rule_id: str, changes: dict) -> bool:
        """Apply `changes` (column -> value); False when the rule does not exist."""

    def delete_rule(self, rule_id: str) -> bool:
        """Delete a rule and its alert events; False when the rule does not exist."""

    def last_fired_at(self, rule_ids: list[str]) -> dict[str, str | None]:
        """Current last_fired_at of some rules (re-read inside the firing transaction)."""

    def record_firing(self, alert: dict) -> None:
        """Insert an alert event and stamp its rule's last_fired_at (inside a transaction)."""

    def list_alerts(self, *, limit: int, unacknowledged: bool,
                    rule_id: str | None) -> tuple[list[dict], int]:
        """Alert events newest first, and how many match the filters."""

    def get_alert(self, alert_id: str) -> dict | None:
        """One alert event, or None."""

    def acknowledge_alert(self, alert_id: str, at: str) -> bool:
        """Mark acknowledged; a second acknowledgement keeps the first timestamp."""

    def unresolved_alerts(self, rule_ids: list[str]) -> list[dict]:
        """The alerts of these rules not yet resolved, oldest first."""

    def resolve_alerts(self, alert_ids: list[str], at: str) -> None:
        """Stamp resolved_at on these alerts (those already resolved keep theirs)."""


class ChangesRepository(Protocol):
    """The reads behind change detection, and acknowledged changes."""

    def window_sessions(self, agent: str | None, since: str, until: str) -> list[dict]:
        """The sessions started in [since, until), of one agent or all, by agent then start."""

    def window_model_tokens(self, agent: str | None, since: str,
                            until: str) -> list[tuple[str, str | None, int, int]]:
        """(session_id, model, tokens_in, tokens_out) per session of the window and model."""

    def llm_durations(self, session_ids: list[str]) -> list[float]:
        """The durations of the successful llm_call events of these sessions, sorted."""

    def acknowledged(self, change_ids: list[str]) -> dict[str, dict]:
        """{change_id: {"acknowledged_at", "note"}} of the acknowledged changes among these."""

    def acknowledge(self, change_id: str, agent: str, changed_at: str, at: str,
                    note: str | None) -> bool:
        """Record an acknowledgement; False when the change already was acknowledged."""
class DashboardRepository(Protocol):
    """The dashboard's generated signing key (one row) and its logins."""

    def get_secret(self) -> str | None:
        """The stored key, or None."""

    def keep_secret(self, secret: str, created_at: str) -> str:
        """Store `secret` unless a key is stored already; return the stored key."""

    def add_login(self, token_hash: str, key_proof: str, at: str) -> None:
        """Record a dashboard login (the SHA-256 of its cookie's token), begun and used `at`."""

    def get_login(self, token_hash: str) -> dict | None:
        """{"key_proof", "created_at", "last_seen_at"} of a login, or None."""

    def touch_login(self, token_hash: str, at: str) -> None:
        """Mark a login used `at` (never earlier than it was)."""

    def delete_login(self, token_hash: str) -> bool:
        """End a login; False when there was none."""

    def prune_logins(self, idle_before: str, created_before: str) -> int:
        """Delete the logins unused since `idle_before` or begun before `created_before`."""


class AnalyticsRepository(Protocol):
    """The aggregates behind `GET /analytics`."""

    def rollup_is_current(self) -> bool:
        """True when the rollup counts exactly the stored events (call inside a snapshot)."""

    def repair_rollup(self) -> None:
        """Rebuild the rollup when events were written or deleted behind the ingest path."""

    def overview(self) -> dict:
        """Session counts per status, event and token totals, earliest and latest session."""

    def top_agents(self, limit: int) -> list[tuple]:
        """(agent_name, session_count, total_tokens), most tokens first."""

    def sessions_by_day(self, since: str) -> list[tuple]:
        """(day, session_count, total_tokens) for sessions started at or after `since`."""

    def model_usage(self) -> list[tuple]:
        """(model, calls, tokens_in, tokens_out, duration_sum, duration_count), most calls first."""

    def event_type_counts(self) -> list[tuple]:
        """(event_type, count) without lifecycle events, most frequent first."""

    def hourly_counts(self) -> list[tuple]:
        """(hour 0-23 UTC, event count) for the hours that have events."""

    def cost_by_agent_day(self) -> list[tuple]:
        """(agent_name, start day, cost_usd or None, unpriced calls, sessions) of every group."""

    def cost_by_model(self) -> list[tuple]:
        """(model or None, cost_usd or None, unpriced calls, calls) over the calls that used
        tokens, most cost first, unpriced models last."""


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


class CostsRepository(Protocol):
    """The price table of the stored costs, and costing the stored events again."""

    def price_table(self) -> dict | None:
        """{prices, mixed, updated_at, repriced_at}; None before any event was costed."""

    def stored_models(self) -> list[str]:
        """The models named by stored events, in order."""

    def set_model_costs(self, model: str, input_per_token: float | None,
                        output_per_token: float | None) -> int:
        """Recost the events of `model` (NULL when its prices are None); returns how many."""

    def recount_session_costs(self) -> int:
        """Every session's cost_usd and unpriced_calls again from its events; returns how many."""

    def recount_rollup_costs(self) -> None:
        """The event_stats rollup (with its costs) again from the events."""

    def mark_repriced(self, prices: str) -> None:
        """Every stored cost now comes from the price table `prices`."""


class IngestRepository(Protocol):
    """Writing events and maintaining session totals (one transaction per batch)."""

    def existing_event_ids(self, event_ids: Sequence[str]) -> set[str]:
        """The subset of `event_ids` already stored."""

    def write_batch(
        self,
        rows: Sequence[tuple],
        session_deltas: Iterable[tuple],
        starts: Iterable[tuple],
        ends: Iterable[tuple],
        totals: dict[tuple, list],
        *,
        skip_existing: bool = False,
        prices: str | None = None,
    ) -> int:
        """Write one validated batch; returns how many event rows were inserted."""


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


class MetricsRepository(Protocol):
    """Aggregates over the events of a time window (behind services/metrics.py)."""

    def event_aggregates(self, since: str, until: str | None, agent: str | None) -> dict:
        """One scan of the window: counts and sums behind the event metrics."""

    def duration_at_rank(self, since: str, until: str | None, agent: str | None,
                         rank: int) -> float | None:
        """The `rank`-th smallest duration_ms (1-based) among the window's events that have one."""

    def window_cost(self, since: str, until: str | None, agent: str | None) -> float | None:
        """The USD cost stored with the window's events (None when none of them was priced)."""

    def sessions_started(self, since: str, until: str | None, agent: str | None) -> int:
        """Sessions whose started_at is in the window."""

    def score_average(self, name: str, since: str, until: str | None, agent: str | None) -> float | None:
        """The mean value of the scores named `name` given in the window, None when none."""


    def top_sessions(self, since: str, until: str | None, agent: str | None, by: str,
                     limit: int) -> list[dict]:
        """The sessions whose events in the window weigh most in a metric (tokens, slowest, events)."""


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
        """(input_data, output_data, metadata), parsed, of each of `event_ids` that is stored."""

    def set_event_contents(self, rows: Iterable[tuple]) -> None:
        """Set (input_data_json, output_data_json, metadata_json, event_id)."""

    def span_log_events(self, span_event_ids: Sequence[str]) -> dict[str, list]:
        """Events of GenAI log records stored before their span (ids `<span event id>:<key>`),
        per span event id, as (event_id, input_data, output_data, metadata) in event id order."""


class ScorecardsRepository(Protocol):
    """Aggregates behind the scorecards, per agent or, for one agent, per day."""

    def session_totals(self, since: str, until: str, agent: str | None = None) -> dict:
        """{group: (sessions, error_sessions, completed_sessions)}."""

    def event_totals(self, since: str, until: str, agent: str | None) -> dict:
        """Per group: (events, error_events, timed_events, tokens, stored cost or None)."""

    def duration_percentiles(self, since: str, until: str, agent: str | None,
                             counts: dict) -> dict:
        """{group: (p50, p95)}: nearest-rank percentiles of each group's event durations."""


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


class SessionAggregatesRepository(Protocol):
    """Per-session aggregates behind the explain summary and the comparison."""

    def session_breakdown(self, session_id: str) -> list[dict]:
        """Event counts, errors, tokens and durations grouped by (event_type, model, tool_name)."""


class SessionsRepository(Protocol):
    """Reading sessions and their events."""

    def list_sessions(self, selection: SessionFilter, *, limit: int, offset: int,
                      after: tuple | None = None) -> tuple[list[dict], int]:
        """The sessions `selection` matches in its order, each row with its `sort_value`, after
        the sort key `after` ((sort_value, session_id) of a previous page's last row), and the
        count of every match (cheap from the rollups when the filter is at most a status)."""

    def get_session(self, session_id: str) -> dict | None:
        """One session, or None."""

    def agent_names(self, prefix: str, limit: int) -> list[str]:
        """Up to `limit` agent names starting with `prefix`, in code point order (cheap: a rollup)."""

    def session_ids(self, prefix: str, limit: int) -> list[str]:
        """Up to `limit` session ids starting with `prefix`, in code point order (an index range)."""

    def session_timeline_rows(self, session_id: str, limit: int | None = None, *,
                              last: bool = False) -> list[tuple]:
        """A session's events in the order of iter_session_events, as timeline tuples; with
        `limit`, the first (or `last`) that many."""

    def iter_session_events(self, session_id: str) -> Iterator[dict]:
        """A session's events in time order (ties in arrival order), streamed."""

    def session_events_page(self, session_id: str, after: tuple[str, int] | None,
                            limit: int) -> list[tuple[int, dict]]:
        """(id, event) of up to `limit` events in that order, after the (timestamp, id) `after`."""

    def session_tree_rows(self, session_id: str) -> list[tuple]:
        """(event_id, parent_id, timestamp, event_type, model, tool_call, duration_ms, is_error)
        of a session's events, in time order."""

    def delete_session(self, session_id: str) -> int | None:
        """Delete a session with its events, tags, scores and trace links, keeping the rollups
        exact (inside a write transaction); events deleted, or None when there is no such session."""

    def session_tags(self, session_ids: list[str]) -> dict[str, dict[str, str]]:
        """{session_id: {key: value}} for those of `session_ids` that have tags."""

    def set_tags(self, rows: list[tuple[str, str, str]]) -> None:
        """Set (session_id, key, value) tags; a key already set takes the new value."""

    def remove_tags(self, session_id: str, keys: list[str]) -> None:
        """Remove these tag keys from a session."""

    def insert_score(self, score: dict) -> None:
        """Insert one score (SCORE_COLUMNS)."""

    def session_scores(self, session_id: str) -> list[dict]:
        """A session's scores, oldest first."""


    def idle_candidates(self, cutoff: str, after: tuple[str, str] | None, limit: int) -> list[tuple]:
        """(session_id, last_event_at) of active sessions whose last event is before `cutoff`,
        in (last_event_at, session_id) order after the key `after`."""

    def latest_roots(self, session_ids: list[str]) -> dict[str, tuple]:
        """session_id -> (timestamp, duration_ms, is_error) of each session's latest root event
        (no parent_id; not a session_end)."""

    def complete_idle(self, endings: list[tuple]) -> int:
        """Complete (status, ended_at, session_id, last_event_at, cutoff) sessions still active
        with that last event and nothing received since the cutoff, marked as idle-ended;
        returns how many."""


class SlaRepository(Protocol):
    """SLA targets and their compliance snapshots."""

    def get_target(self, agent_name: str, metric: str) -> dict | None:
        """One target, or None."""

    def list_targets(self) -> list[dict]:
        """Every target, by agent then metric."""

    def insert_target(self, target: dict) -> None:
        """Insert a new target."""

    def update_target(self, target: dict) -> None:
        """Update the operator, value and window of the target with the same (agent_name, metric)."""

    def delete_target(self, agent_name: str, metric: str) -> bool:
        """Remove one target (its snapshots stay as history); False when there was none."""

    def insert_snapshots(self, snapshots: Iterable[dict]) -> None:
        """Store check results."""

    def list_snapshots(self, *, since: str, agent_name: str | None,
                       limit: int) -> tuple[list[dict], int]:
        """Snapshots checked at or after `since`, newest check first, and how many match."""

    def latest_snapshots(self) -> list[tuple[str, str, dict | None]]:
        """For every current target: (agent_name, metric, its most recent snapshot or None)."""


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


class TriageRepository(Protocol):
    """The reads behind triage and postmortems."""

    def session_steps(self, session_id: str) -> list[tuple]:
        """The session's events in time order (ties in arrival order), as step tuples."""

    def session_breakdown(self, session_id: str) -> list[tuple]:
        """A session's events added up per (event_type, is_error, model, tool_name): counts,
        tokens, the durations' sum and the durations (store/long_session_sql.py)."""

    def session_error_rows(self, session_id: str, event_types: list[str], cap: int) -> list[tuple]:
        """The first `cap` failed events of these types in order, each with the successful body
        events since the error before it (counted up to 4)."""

    def session_error_places(self, session_id: str, event_types: list[str], after: tuple[str, int],
                             count: int) -> list[tuple[int, int]]:
        """(id, events since the error before it) of the first `count` errors after `after`."""

    def session_end_rows(self, session_id: str, count: int, last: bool) -> list[tuple]:
        """The first (or last, newest first) `count` events, as step tuples."""

    def session_last_body(self, session_id: str, successful: bool) -> tuple | None:
        """(timestamp, id, is_error) of the last body event (or the last successful one)."""

    def iter_tool_calls(self, session_id: str) -> Iterator[tuple]:
        """The session's tool calls in order with their input and output as JSON text, streamed."""

    def next_model_call(self, session_id: str, timestamp: str, row_id: int) -> tuple | None:
        """(model, is_error) of the first body event with a model after (timestamp, id)."""

    def iter_slow_ids(self, session_id: str, event_type: str, tool_name: str | None,
                      threshold: float) -> Iterator[tuple]:
        """(timestamp, id, event_id) of a kind's successful events slower than `threshold`."""

    def baseline_sessions(self, agent: str, since: str, until: str, exclude: str,
                          cap: int) -> list[dict]:
        """Totals of the baseline sessions, newest first."""

    def baseline_model_tokens(self, agent: str, since: str, until: str, exclude: str,
                              cap: int) -> list[tuple[str, str | None, int, int]]:
        """(session_id, model, tokens_in, tokens_out) per baseline session and model."""

    def baseline_durations(self, session_ids: list[str]) -> dict[tuple[str, str | None], list[float]]:
        """{(event_type, tool_name): sorted durations} of these sessions' successful events."""

    def recent_session_ids(self, *, limit: int, min_events: int, agent: str | None,
                           since: str | None = None, until: str | None = None) -> tuple[list[str], int]:
        """The `limit` most recently started sessions (started in [since, until) when given)
        with at least `min_events` events."""

    def postmortem_candidates(self, *, min_errors: int, limit: int, agent: str | None,
                              since: str | None, high_rate: float, medium_rate: float,
                              medium_count: int, cost_floors: tuple[float, float, float]
                              ) -> tuple[list[dict], int]:
        """Sessions with at least `min_errors` error events, most severe first, and their total."""

    def error_events(self, since: str, until: str, agent: str | None, cap: int) -> list[tuple]:
        """The error events in [since, until), oldest first, at most `cap` (incidents)."""


class WebhooksRepository(Protocol):
    """Webhooks and their delivery outbox."""

    def insert_webhook(self, webhook: dict) -> None:
        """Insert a new webhook."""

    def get_webhook(self, webhook_id: str) -> dict | None:
        """One webhook, or None."""

    def list_webhooks(self, *, enabled_only: bool = False) -> list[dict]:
        """Webhooks in creation order, only the enabled ones if `enabled_only`."""

    def update_webhook(self, webhook_id: str, changes: dict) -> bool:
        """Apply `changes` (column -> value); False when the webhook does not exist."""

    def delete_webhook(self, webhook_id: str) -> bool:
        """Delete a webhook and its deliveries; False when the webhook does not exist."""

    def disable_webhook(self, webhook_id: str, updated_at: str) -> None:
        """Disable a webhook (deliveries to it stop being attempted)."""

    def insert_deliveries(self, deliveries: Iterable[dict]) -> None:
        """Queue deliveries in the outbox."""

    def expire_pending(self, created_before: str, message: str) -> int:
        """Give up on pending deliveries created before `created_before`."""

    def claim_due(self, now: str, lease_until: str) -> dict | None:
        """Take the next due pending delivery of an enabled webhook (inside a write transaction)."""

    def claim_failed(self, delivery_id: str, lease_until: str) -> dict | None:
        """Take a failed delivery of an enabled webhook back as a pending claim, for a retry now."""

    def get_delivery(self, delivery_id: str) -> dict | None:
        """One delivery (without its payload), or None."""

    def record_attempt(self, delivery_id: str, attempts_before: int, *, status: str,
                       error: str | None, status_code: int | None, next_attempt_at: str,
                       delivered_at: str | None) -> bool:
        """Record the outcome of the attempt claimed with `attempts_before` attempts made."""

    def cancel_pending_for_rule(self, rule_id: str, message: str) -> int:
        """Mark failed, with `message`, the pending deliveries of a rule's alerts."""

    def next_due_at(self) -> str | None:
        """When the earliest pending delivery of an enabled webhook is due (None: none pending)."""

    def list_deliveries(self, *, webhook_id: str | None, status: str | None,
                        alert_id: str | None, limit: int) -> tuple[list[dict], int]:
        """Deliveries newest first (without payloads), and how many match."""
