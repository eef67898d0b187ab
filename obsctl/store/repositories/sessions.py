"""The repositories of the reads over sessions: the sessions themselves, their aggregates,
triage, analytics, metrics and the dashboard. See the package's docstring."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from obsctl.models.sessions import SessionFilter


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

    def agent_totals(self, since_day: str, limit: int) -> tuple[list[tuple], int]:
        """Up to `limit` agents with sessions started on `since_day` (YYYY-MM-DD) or later, most
        sessions first, and how many there are: (agent_name, sessions, active, completed, error,
        event_count, tokens_in, tokens_out, ended, duration_sum, first_day, last_day,
        last_event_at) each, from the session_stats rollup."""

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

    def insert_scores_once(self, scores: list[dict]) -> None:
        """Insert scores whose ids may already be stored (a retried export): those are kept as they are."""

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

class SessionAggregatesRepository(Protocol):
    """Per-session aggregates behind the explain summary and the comparison."""

    def session_breakdown(self, session_id: str) -> list[dict]:
        """Event counts, errors, tokens and durations grouped by (event_type, model, tool_name)."""

class TriageRepository(Protocol):
    """The reads behind triage and postmortems."""

    def session_steps(self, session_id: str) -> list[tuple]:
        """The session's events in time order (ties in arrival order), as step tuples."""

    def session_breakdown(self, session_id: str) -> list[tuple]:
        """A session's events added up per (event_type, is_error, model, tool_name): counts,
        tokens, the durations' sum and the durations (store/long_session_sql.py)."""

    def session_error_rows(self, session_id: str, cap: int) -> list[tuple]:
        """The first `cap` failed body events in order, each with the successful body events
        since the error before it (counted up to 4), then the tool name and is_error of the
        tool call after a failed tool call."""

    def session_error_places(self, session_id: str, after: tuple[str, int],
                             count: int) -> list[tuple[int, int]]:
        """(id, events since the error before it) of the first `count` errors after `after`."""

    def session_end_rows(self, session_id: str, count: int, last: bool) -> list[tuple]:
        """The first (or last, newest first) `count` events, as step tuples."""

    def session_last_body(self, session_id: str, successful: bool) -> tuple | None:
        """(timestamp, id, is_error) of the last body event (or the last successful one)."""

    def iter_tool_calls(self, session_id: str, min_repeats: int) -> Iterator[tuple]:
        """The session's tool calls that loop detection must see, in order, streamed: the JSON
        of those whose key the session has at least `min_repeats` times (long_session_sql)."""

    def next_model_call(self, session_id: str, timestamp: str, row_id: int) -> tuple | None:
        """(model, is_error) of the first body event with a model after (timestamp, id)."""

    def iter_slow_ids(self, session_id: str, event_type: str, tool_name: str | None,
                      threshold: float) -> Iterator[tuple]:
        """(timestamp, id, event_id) of a kind's successful events slower than `threshold`."""

    def baseline_sessions(self, agent: str, since: str, until: str, exclude: str,
                          cap: int) -> list[dict]:
        """Totals of the baseline sessions, newest first."""

    def baseline_model_tokens(self, agent: str, since: str, until: str, exclude: str,
                              cap: int) -> list[tuple]:
        """(session_id, model, tokens_in, tokens_out, cache read, cache write, reasoning) per
        baseline session and model."""

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
