"""`GET /changes` and `POST /changes/{change_id}/ack`, as declared models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct, field

from obsctl.models.common import Count, Timestamp, enum_of

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
