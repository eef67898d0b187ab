"""`GET /analytics` (spec 2.5), as declared models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from obsctl.models.common import Count, Percent, rate_of
from obsctl.models.reads import NoParameters, Read


class AnalyticsOverview(Struct):
    total_sessions: Count
    active_sessions: Count
    completed_sessions: Count
    error_sessions: Count
    error_rate: Annotated[Percent, rate_of("error_session_rate",
                     "The error_session_rate under the spec's name (of sessions, not events)")]
    error_session_rate: Annotated[Percent, rate_of("error_session_rate")]
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
    total_tokens_cache_read: Annotated[int, Meta(
        ge=0, description="The part of total_tokens_in read from prompt caches")]
    total_tokens_cache_write: Annotated[int, Meta(
        ge=0, description="The part of total_tokens_in written to prompt caches")]
    total_tokens_reasoning: Annotated[int, Meta(
        ge=0, description="The part of total_tokens_out spent on reasoning")]
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


Usd = Annotated[float | None, Meta(description="USD from the costs stored at ingest; null when nothing "
                                              "in the group was priced")]
Unpriced = Annotated[int, Meta(ge=0, description="Calls that used tokens of a model without a known price "
                                                 "(left out of the cost)")]


class AgentCostTotal(Struct):
    agent_name: str
    cost_usd: Usd
    unpriced_calls: Unpriced
    session_count: Count


class ModelCostTotal(Struct):
    model: Annotated[str | None, Meta(description="null: calls that named no model")]
    cost_usd: Usd
    unpriced_calls: Unpriced
    call_count: Annotated[int, Meta(ge=0, description="Calls with tokens")]


class DayCostTotal(Struct):
    day: Annotated[str, Meta(description="YYYY-MM-DD (UTC), the sessions' start day")]
    cost_usd: Usd
    unpriced_calls: Unpriced
    session_count: Count


class CostTotals(Struct):
    total_usd: Usd
    unpriced_calls: Unpriced
    by_agent: Annotated[list[AgentCostTotal], Meta(description="Every agent, all time, most cost first")]
    by_model: Annotated[list[ModelCostTotal], Meta(
        description="Every model of calls with tokens, all time, most cost first, unpriced last")]
    by_day: Annotated[list[DayCostTotal], Meta(
        description="Days with sessions started in the last 90 days (UTC), oldest first")]


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
    costs: Annotated[CostTotals, Meta(description="What the calls cost: per agent, per model and per day")]


ANALYTICS = Read("/analytics", "obsctl.services.analytics:get_analytics", NoParameters, Analytics,
                 summary="Aggregate analytics across all sessions", tag="analytics", errors=())
