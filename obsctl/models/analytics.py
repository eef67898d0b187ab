"""`GET /analytics` (spec 2.5), as declared models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from obsctl.models.common import Count, Percent, rate


class AnalyticsOverview(Struct):
    total_sessions: Count
    active_sessions: Count
    completed_sessions: Count
    error_sessions: Count
    error_rate: rate("error_session_rate", Percent,
                     "The error_session_rate under the spec's name (of sessions, not events)")
    error_session_rate: rate("error_session_rate", Percent)
    total_events: Annotated[int, Meta(
        ge=0, description="Every stored event, session_start and session_end included")]
    total_tokens: Count
    total_tokens_in: Count
    total_tokens_out: Count
    avg_tokens_per_session: float
    earliest_session: Annotated[str | None, Meta(description="Earliest started_at")]
    latest_session: Annotated[str | None, Meta(description="Latest started_at")]


class AnalyticsDuration(Struct):
    """Wall-clock duration of ended sessions; null when none has ended"""

    avg_ms: float | None
    min_ms: float | None
    max_ms: float | None


class AgentUsage(Struct):
    agent_name: str
    session_count: Count
    total_tokens: Count
    avg_tokens: float


class AnalyticsModelUsage(Struct):
    model: str
    call_count: Count
    total_tokens: Count
    total_tokens_in: Count
    total_tokens_out: Count
    avg_duration_ms: float | None


class EventTypeCount(Struct):
    event_type: str
    count: Count


class DaySessions(Struct):
    day: Annotated[str, Meta(description="YYYY-MM-DD (UTC)")]
    session_count: Count
    total_tokens: Count


class HourActivity(Struct):
    hour: Annotated[int, Meta(ge=0, le=23)]
    event_count: Count


class Analytics(Struct):
    overview: AnalyticsOverview
    duration: Annotated[AnalyticsDuration, Meta(
        description="Wall-clock duration of ended sessions; null when none has ended")]
    top_agents: Annotated[list[AgentUsage], Meta(
        max_length=10, description="Top 10 agents by total tokens")]
    model_usage: Annotated[list[AnalyticsModelUsage], Meta(description="Events with a model, most calls first")]
    event_types: Annotated[list[EventTypeCount], Meta(
        description="Without session_start and session_end, most frequent first")]
    sessions_over_time: Annotated[list[DaySessions], Meta(
        description="Days with sessions started in the last 90 days (UTC), oldest first")]
    hourly_activity: Annotated[list[HourActivity], Meta(
        min_length=24, max_length=24,
        description="Events per hour of day (UTC) across all time, hours 0-23")]
