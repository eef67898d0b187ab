"""`GET /changes` and `POST /changes/{change_id}/ack`, as declared models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct, field

from obsctl.models.common import Count, Timestamp, enum_of, within
from obsctl.models.reads import Read
from obsctl.params import IntParam

STATUSES = ("regression", "improvement", "neutral")
VERDICTS = ("regression", "improvement", "unchanged")


class Configuration(Struct):
    model: Annotated[str | None, Meta(description="The model that spent most of the session's tokens")]
    release: Annotated[str | None, Meta(description="The `release` (else `version`) of the session's metadata")]


class Side(Struct):
    sessions: Count
    first_session_id: str | None
    last_session_id: str | None
    llm_calls: Annotated[int, Meta(ge=0, description="Successful llm_call events with a duration")]
    llm_p50_ms: Annotated[float | None, Meta(description="Median duration of those calls")]
    priced_sessions: Count
    cost_per_session_usd: Annotated[float | None, Meta(description="Median priced cost of a session")]
    body_events: Count
    error_events: Count
    error_event_rate: Annotated[float, Meta(ge=0, le=100, description="error_events / body_events, percent")] | None


class Verdicts(Struct):
    llm_p50_ms: Annotated[str, enum_of(VERDICTS)] | None
    cost_per_session_usd: Annotated[str, enum_of(VERDICTS)] | None
    error_event_rate: Annotated[str, enum_of(VERDICTS)] | None


class Change(Struct):
    change_id: Annotated[str, Meta(description="AGENT@CHANGED_AT: acknowledge it with POST /changes/{change_id}/ack")]
    agent_name: str
    changed_at: Annotated[str, Meta(description="Start of the first session of the new configuration")]
    first_session_id: str
    from_: Configuration = field(name="from")
    to: Configuration
    status: Annotated[str, enum_of(STATUSES), Meta(
        description="regression when a metric got worse, improvement when one got better and none worse")]
    provisional: Annotated[bool, Meta(description="Fewer than 3 sessions after the change")]
    acknowledged: bool
    acknowledged_at: Timestamp | None
    note: str | None
    metrics: Verdicts
    before: Side
    after: Side
    title: Annotated[str, Meta(description="What changed and what it did, in one line")]


class ChangeList(Struct):
    since: Timestamp
    until: Timestamp
    total: Count
    changes: list[Change]


class ChangeAck(Struct):
    note: Annotated[str, Meta(max_length=500)] | None = None


LIMIT = IntParam("limit", 1, 200, default=50)


class ChangesQuery(Struct, kw_only=True):
    since: Annotated[str, Meta(description="An age before until (30m, 24h, 7d, 2w) or an ISO 8601 time; "
                                           "default 7d")] | None = None
    until: Annotated[str, Meta(description="ISO 8601; default now")] | None = None
    agent: Annotated[str, Meta(description="Only this agent's changes")] | None = None
    limit: Annotated[int, within(LIMIT, description="Changes to return")] | None = None


CHANGES = Read("/changes", "obsctl.services.changes:list_changes", ChangesQuery, ChangeList,
               summary="Changes of agents' configurations (model, release) and what they did to LLM latency, "
                       "cost and errors; unacknowledged regressions first",
               tag="changes", context=("pricer",))
