"""Sessions, their events, and the explain and export responses, as declared models; the
agents list (a read declared with models/reads.py)."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from obsctl.models.common import Count, JsonObject, Timestamp, rate_of, within
from obsctl.models.reads import SESSION_ID, NoParameters, Read
from obsctl.params import IntParam

SessionStatus = Literal["active", "completed", "error"]


class MessageToolCall(Struct):
    name: str
    arguments: Annotated[object, Meta(description="As the model gave them: parsed when JSON text")]


class Message(Struct, omit_defaults=True):
    """One message of a model call's conversation, the same shape whatever the source"""

    role: Annotated[str, Meta(description="system, user, assistant or tool (other roles as sent)")]
    content: Annotated[str | None, Meta(description="The message's text; a tool message's result")]
    tool_calls: list[MessageToolCall] | UnsetType = UNSET
    tool_call_id: Annotated[str, Meta(description="A tool message: the call it answers")] | UnsetType = UNSET


class ExportEvent(Struct):
    event_id: str
    event_type: str
    timestamp: Timestamp
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    duration_ms: float | None
    input_data: JsonObject | None
    output_data: JsonObject | None
    tool_call: JsonObject | None
    decision_trace: JsonObject | None
    tokens_cache_read: int | None
    tokens_cache_write: int | None
    tokens_reasoning: int | None
    messages: Annotated[list[Message] | None, Meta(
        description="The model call's conversation read from input_data and output_data (what it was "
                    "sent, then its reply), in one shape whatever the framework; null without messages")]


class ExportedSession(Struct):
    session_id: str
    agent_name: str
    status: SessionStatus
    started_at: Timestamp
    ended_at: str | None
    total_tokens_in: int
    total_tokens_out: int
    metadata: JsonObject | None


class ExportSummary(Struct):
    total_events: Count
    total_tokens: Count
    models_used: list[str]
    event_types: list[str]
    total_duration_ms: Annotated[float, Meta(ge=0)]


class SessionExport(Struct):
    """Spec 2.3. summary.total_tokens and total_duration_ms are sums over the exported events;
    models_used and event_types are sorted."""

    exported_at: Timestamp
    session: ExportedSession
    events: list[ExportEvent]
    summary: ExportSummary


class SessionExplanation(Struct):
    session_id: str
    explanation: Annotated[str, Meta(description="Markdown")]


class Event(Struct, omit_defaults=True):
    """A stored event as the API returns it"""

    event_id: str
    session_id: str
    event_type: str
    timestamp: Timestamp
    is_error: bool
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_cache_read: Annotated[int | None, Meta(
        description="The part of tokens_in read from the provider's prompt cache")] = None
    tokens_cache_write: Annotated[int | None, Meta(
        description="The part of tokens_in written to the provider's prompt cache")] = None
    tokens_reasoning: Annotated[int | None, Meta(description="The part of tokens_out spent on reasoning")] = None
    duration_ms: float | None = None
    cost_usd: Annotated[float | None, Meta(
        description="USD, computed at ingest (cache and reasoning tokens at their own prices); null "
                    "without tokens or without a known price")] = None
    input_data: JsonObject | None = None
    output_data: JsonObject | None = None
    tool_call: JsonObject | None = None
    decision_trace: JsonObject | None = None
    metadata: JsonObject | None = None
    agent_name: str | None = None
    parent_id: Annotated[str | None, Meta(
        description="event_id of the parent event (with tree=true: still set on an orphan at the "
                    "root, whose parent was not received)")] = None
    self_time_ms: Annotated[float | None, Meta(
        description="tree=true only: duration_ms minus the union of the children's spans; null "
                    "without a duration")] | UnsetType = UNSET
    children: Annotated[list[Event], Meta(
        description="tree=true only: the events whose parent_id names this one, in time order")] | UnsetType = UNSET


TagKey = Annotated[str, Meta(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
TagValue = Annotated[str, Meta(min_length=1, max_length=256)]


class Score(Struct):
    """A score (feedback) given to a session"""

    score_id: str
    session_id: str
    name: TagKey
    value: float
    comment: str | None
    created_at: Timestamp


class ScoreInput(Struct, forbid_unknown_fields=True):
    """The body of `POST /sessions/<id>/scores`"""

    name: TagKey
    value: Annotated[float, Meta(description="Any finite number")]
    comment: Annotated[str, Meta(max_length=2000)] | None = None


class SessionTags(Struct):
    """A session's tags after a change (`PATCH /sessions/<id>/tags`)"""

    session_id: str
    tags: dict[TagKey, str]


class SessionDeleted(Struct):
    """The answer to `DELETE /sessions/<id>`"""

    deleted: bool
    session_id: str
    events_deleted: Count


class Session(Struct, omit_defaults=True):
    """A session as `GET /sessions` lists it"""

    session_id: str
    agent_name: str
    started_at: Timestamp
    status: SessionStatus
    total_tokens_in: int
    total_tokens_out: int
    ended_at: str | None = None
    metadata: JsonObject | None = None
    total_tokens_cache_read: Annotated[int, Meta(
        description="The part of total_tokens_in read from prompt caches")] | UnsetType = UNSET
    total_tokens_cache_write: Annotated[int, Meta(
        description="The part of total_tokens_in written to prompt caches")] | UnsetType = UNSET
    total_tokens_reasoning: Annotated[int, Meta(
        description="The part of total_tokens_out spent on reasoning")] | UnsetType = UNSET
    event_count: int | UnsetType = UNSET
    error_count: int | UnsetType = UNSET
    cost_usd: Annotated[float | None, Meta(
        description="USD, the sum of the priced calls' costs (computed at ingest); null when no call "
                    "was priced")] | UnsetType = UNSET
    unpriced_calls: Annotated[int, Meta(
        description="Calls that used tokens of a model without a known price (not in cost_usd)")] | UnsetType = UNSET
    background: Annotated[bool, Meta(
        description="Work outside any agent run (an OTLP trace with no agent span and no model call but "
                    "embeddings or tool call: indexing, start-up embeddings); left out of triage batch and "
                    "scorecards")] | UnsetType = UNSET
    tags: Annotated[dict[TagKey, str], Meta(description="key -> value")] | UnsetType = UNSET


class SessionDetail(Session, kw_only=True):
    """A session with its scores and events (`GET /sessions/<id>`; with tree=true, `events`
    holds the roots of the span tree of those events): all of them up to 10,000 (`limit`),
    else that many and `next`"""

    scores: list[Score]
    events: list[Event]
    next: Annotated[str | None, Meta(
        description="Opaque cursor of the session's next events (pass it as `cursor`); null when "
                    "`events` holds the last of them")]


class SessionList(Struct):
    """A page of sessions (`GET /sessions`) in the order asked for (newest first by default);
    total counts every match"""

    sessions: list[Session]
    total: Count
    next: Annotated[str | None, Meta(
        description="Opaque cursor of the next page (pass it as `cursor`); null on the last page")]


# The sort keys of a session list, each a column (or expression) of the stores' sessions
# listing (store/session_filter_sql.py).
SESSION_SORT_KEYS = ("start", "duration", "tokens", "errors", "cost")
# The numeric filters: NAME gives the fields min_NAME and max_NAME (inclusive) and is one
# entry of the stores' range columns: whole numbers (tokens) or USD (cost).
SESSION_RANGES = ("tokens", "cost")


class SessionFilter(Struct, frozen=True, forbid_unknown_fields=True):
    """Which sessions a list (`obsctl sessions list`, `GET /sessions`, the dashboard) shows, in
    which order. Every filter given must hold; a filter with several values (agents, models,
    tools, error types) holds when any of them does; tags and metadata pairs must all hold.
    Built and checked once by services/sessions/filters.py."""

    agents: tuple[str, ...] = ()
    status: SessionStatus | None = None
    models: Annotated[tuple[str, ...], Meta(description="Sessions with an event of one of these models")] = ()
    tools: Annotated[tuple[str, ...], Meta(description="Sessions with a call of one of these tools")] = ()
    error_types: Annotated[tuple[str, ...], Meta(
        description="Sessions with an error event of one of these event types")] = ()
    started_from: Annotated[str | None, Meta(description="started_at at or after (UTC ISO 8601)")] = None
    started_to: Annotated[str | None, Meta(description="started_at before (UTC ISO 8601)")] = None
    min_tokens: int | None = None
    max_tokens: int | None = None
    min_cost: Annotated[float | None, Meta(description="USD; sessions without a priced call never match")] = None
    max_cost: Annotated[float | None, Meta(description="USD; sessions without a priced call never match")] = None
    has_errors: bool | None = None
    tags: tuple[tuple[str, str], ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()
    sort: Annotated[str, Meta(description="One of SESSION_SORT_KEYS")] = "start"
    descending: bool = True

    def only_status(self) -> bool:
        """No filter but (perhaps) the status: the rollups can count the matches."""
        return self == SessionFilter(status=self.status, sort=self.sort, descending=self.descending)


# --- Bulk export and follow: which events, and each event as one line ------------------------

class EventSelection(Struct, frozen=True, forbid_unknown_fields=True):
    """Which events a bulk export (`obsctl export --all`, `GET /export`) or a follow (`obsctl
    tail`, `GET /events/stream`) reads. Every filter given must hold; a filter with several
    values holds when any of them does. The agent and status are the session's.

    Declared once so that new filters (model, tokens, cost, metadata) are one field each here
    and one clause in the stores' `events` modules."""

    since: Annotated[str | None, Meta(description="Events at or after this time (UTC ISO 8601)")] = None
    until: Annotated[str | None, Meta(description="Events before this time (UTC ISO 8601)")] = None
    agents: tuple[str, ...] = ()
    statuses: tuple[SessionStatus, ...] = ()
    session_ids: tuple[str, ...] = ()
    event_types: tuple[str, ...] = ()


class EventLine(Struct):
    """One event of a bulk export or a follow, as `obsctl ingest` and `POST /events` take it
    (JSON Lines re-ingest to the same events). status and total_tokens_in/out are set on
    session_end events only: the session's status and final token counts."""

    event_id: str
    session_id: str
    event_type: str
    timestamp: Timestamp
    model: str | None
    agent_name: str | None
    tokens_in: int | None
    tokens_out: int | None
    tokens_cache_read: int | None
    tokens_cache_write: int | None
    tokens_reasoning: int | None
    duration_ms: float | None
    input_data: JsonObject | None
    output_data: JsonObject | None
    tool_call: JsonObject | None
    decision_trace: JsonObject | None
    metadata: JsonObject | None
    parent_id: str | None
    status: SessionStatus | None
    total_tokens_in: int | None
    total_tokens_out: int | None


class FollowedEvent(Struct):
    """One event of a follow (`obsctl tail --json`, a `GET /events/stream` message)"""

    position: Annotated[str, Meta(description="Where the event was stored; resume after it with "
                                              "Last-Event-ID (opaque: compare for equality only)")]
    agent_name: Annotated[str, Meta(description="The agent of the event's session")]
    event: EventLine


# ---- The agents list: `GET /agents`, `obsctl agents` (services/sessions/agents.py) ----

AGENT_DAYS = IntParam("days", 1, 3650, default=30)
AGENTS_LIMIT = IntParam("limit", 1, 1000, default=100, capped=True)


class AgentsQuery(Struct, kw_only=True):
    days: Annotated[int, within(AGENT_DAYS, description="Sessions started in the last DAYS days (UTC), "
                                                        "today included")] | None = None
    limit: Annotated[int, within(AGENTS_LIMIT, description="Agents to return, most sessions first")] | None = None


class AgentSummary(Struct):
    agent_name: str
    sessions: Annotated[Count, rate_of("sessions")]
    active_sessions: Count
    completed_sessions: Count
    error_sessions: Annotated[Count, rate_of("error_sessions")]
    error_session_rate: Annotated[float, rate_of("error_session_rate")]
    event_count: Annotated[Count, Meta(description="Every stored event of these sessions, session_start "
                                                   "and session_end included")]
    total_tokens_in: Count
    total_tokens_out: Count
    avg_duration_ms: Annotated[float | None, Meta(
        description="Mean wall-clock duration of the sessions that ended; null when none has")]
    first_day: Annotated[str, Meta(description="The UTC day (YYYY-MM-DD) of the first session started in the window")]
    last_day: Annotated[str, Meta(description="The UTC day of the last session started in the window")]
    last_event_at: Annotated[Timestamp | None, Meta(description="The agent's latest event, in any session")]


class AgentList(Struct):
    since_day: Annotated[str, Meta(description="The first UTC day of the window (YYYY-MM-DD)")]
    days: Count
    total: Annotated[Count, Meta(description="Agents with sessions in the window")]
    agents: list[AgentSummary]


AGENTS = Read("/agents", "obsctl.services.sessions.agents:list_agents", AgentsQuery, AgentList,
              summary="Every agent with sessions started in the window: its sessions by status, "
                      "events, tokens, mean duration and latest event; most sessions first",
              tag="sessions")
EXPLAIN = Read("/sessions/{session_id}/explain", "obsctl.services.sessions.explain:explain_session", NoParameters,
               SessionExplanation, summary="A session explained as Markdown: header, timeline of every event, summary",
               tag="sessions", errors=(404,), path_params=(SESSION_ID,))


SESSION_EVENTS_LIMIT = IntParam("limit", 1, 10_000, default=10_000, capped=True)


class SessionQuery(Struct, kw_only=True):
    tree: Annotated[bool, Meta(description="Nest the events as a span tree (parent_id): each with self_time_ms "
                                           "and children")] = False
    limit: Annotated[int, within(SESSION_EVENTS_LIMIT, description="Events in this answer (the first page "
                                                                   "without cursor)")] | None = None
    cursor: Annotated[str, Meta(description="The `next` of the previous answer: the session's events after "
                                            "it", extra={"keep_empty": True})] | None = None


SESSION = Read("/sessions/{session_id}", "obsctl.services.sessions:get_session", SessionQuery, SessionDetail,
               summary="One session with its tags, scores and all of its events (up to 10,000; beyond, pages "
                       "with `next`)",
               tag="sessions", errors=(400, 404),
               path_params=(dataclasses.replace(SESSION_ID, converter="session_path"),))
