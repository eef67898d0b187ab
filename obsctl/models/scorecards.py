"""Scorecards (`/scorecards`), as declared models, and the lookback window they take.

The scoring itself is services/scorecards/scoring.py; its dimensions are the fields of
ScorecardDimensions (DIMENSIONS), declared once here.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from obsctl.models.changes import Verdicts
from obsctl.models.common import Count, Grade, Percent, Timestamp, rate_of, within
from obsctl.params import IntParam

DAYS = IntParam("days", 1, 365, default=7)

Score = Percent
NULL_WITHOUT_BODY_EVENTS = "null without body events"


class DimensionScore(Struct):
    score: Score
    grade: Grade


class ScorecardDimensions(Struct):
    reliability: DimensionScore
    performance: DimensionScore
    efficiency: DimensionScore
    throughput: DimensionScore


DIMENSIONS: tuple[str, ...] = ScorecardDimensions.__struct_fields__


class Scorecard(Struct):
    agent: str
    overall_score: Score
    grade: Grade
    dimensions: ScorecardDimensions
    sessions_analyzed: Annotated[int, Meta(ge=1)]
    period_days: Annotated[int, within(DAYS)]


class ReliabilityInputs(Struct):
    body_events: Annotated[Count, rate_of("body_events")]
    error_events: Annotated[Count, rate_of("error_events")]
    error_event_rate: Annotated[Percent | None, rate_of("error_event_rate", NULL_WITHOUT_BODY_EVENTS)]
    sessions: Annotated[Count, rate_of("sessions")]
    error_sessions: Annotated[Count, rate_of("error_sessions")]
    error_session_rate: Annotated[Percent, rate_of("error_session_rate")]
    event_score: Score
    session_score: Score
    change_score: Annotated[Score | None, Meta(
        description="The part an unacknowledged regression of the agent's configuration adds (GET /changes)")]


class PerformanceInputs(Struct):
    timed_events: Count
    p50_duration_ms: float | None
    p95_duration_ms: float | None
    fleet_p50_duration_ms: float | None
    fleet_p95_duration_ms: float | None
    p50_score: Score | None
    p95_score: Score | None
    change_score: Annotated[Score | None, Meta(
        description="The part an unacknowledged regression of the agent's configuration adds (GET /changes)")]


class EfficiencyInputs(Struct):
    tokens: Count
    tokens_per_session: float
    fleet_tokens_per_session: float
    cost_usd: float | None
    cost_per_session: float | None
    fleet_cost_per_session: float | None
    tokens_score: Score
    cost_score: Score | None
    change_score: Annotated[Score | None, Meta(
        description="The part an unacknowledged regression of the agent's configuration adds (GET /changes)")]


class ThroughputInputs(Struct):
    sessions: Count
    completed_sessions: Count
    completion_rate: Percent
    fleet_sessions: float
    volume_score: Score
    completion_score: Score


class ScorecardBreakdown(Struct):
    """The raw inputs and part scores of each dimension"""

    reliability: ReliabilityInputs
    performance: PerformanceInputs
    efficiency: EfficiencyInputs
    throughput: ThroughputInputs


class TrendPoint(Struct):
    """One 24-hour day of the window, scored against the whole window's fleet reference"""

    day: Annotated[str, Meta(description="UTC date of the day's start",
                             extra_json_schema={"format": "date"})]
    start: Timestamp
    end: Timestamp
    sessions: Count
    body_events: Annotated[Count, rate_of("body_events")]
    error_events: Annotated[Count, rate_of("error_events")]
    error_event_rate: Annotated[Percent | None, rate_of("error_event_rate", NULL_WITHOUT_BODY_EVENTS)]
    error_rate: Annotated[Percent | None, rate_of("error_event_rate",
                     f"The day's error_event_rate under its original name; {NULL_WITHOUT_BODY_EVENTS}")]
    overall_score: Score | None
    grade: Grade | None


class ScorecardChange(Struct):
    change_id: str
    changed_at: Timestamp
    title: str
    metrics: Verdicts


class ScorecardDetail(Scorecard):
    """One agent's scorecard with its breakdown and daily trend (oldest day first)"""

    since: Timestamp
    until: Timestamp
    fleet_agents: Annotated[int, Meta(ge=1)]
    breakdown: ScorecardBreakdown
    trend: list[TrendPoint]
    changes: Annotated[list[ScorecardChange], Meta(
        description="The agent's unacknowledged regressions that started in the window; each "
                    "adds a change_score to the dimension it made worse")]
