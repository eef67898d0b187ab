"""The postmortem report and its candidates (`/postmortem`), as declared models."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from obsctl.models.common import (
    SAME_AS_ERROR_EVENT_RATE,
    Count,
    FailedStepsCost,
    ModelCost,
    Percent,
    SessionCounts,
    Timestamp,
    rate_of,
    within,
)
from obsctl.models.incidents import GAP_MINUTES, Incident
from obsctl.models.reads import PathParam, Read
from obsctl.params import MAX_COUNT, IntParam

Sev = Literal["SEV-1", "SEV-2", "SEV-3", "SEV-4", "none"]
SessionStatus = Literal["active", "completed", "error"]
SevReason = Annotated[str, Meta(description="Why the severity: the counts and the threshold that decided it")]
AtLeastOne = Annotated[int, Meta(ge=1)]


class PostmortemCandidate(SessionCounts):
    session_id: str
    agent_name: str
    started_at: Timestamp
    status: SessionStatus
    error_rate: Annotated[Percent, rate_of("error_event_rate", SAME_AS_ERROR_EVENT_RATE)]
    severity: Sev
    severity_reason: SevReason


class CascadeError(Struct):
    event_id: str
    timestamp: Timestamp
    elapsed_ms: float | None
    event_type: str
    tool_name: str | None
    kind: str
    message: str | None
    caused_by: str | None
    relation: Literal["retry", "same_tool", "followed", "parent"] | None


class CascadeRootCause(Struct):
    event_id: str
    event_type: str
    tool_name: str | None
    kind: str
    message: str | None


class Cascade(Struct):
    cascade: AtLeastOne
    length: AtLeastOne
    path: str
    root_cause: CascadeRootCause
    started_at: Timestamp
    ended_at: Timestamp
    span_ms: float
    recovered: bool
    errors: Annotated[list[CascadeError], Meta(description="Its errors (a session of more than 10,000 "
                                                           "events: the first 100)")]


class ErrorCascade(Struct):
    total_errors: Count
    cascades: list[Cascade]
    longest: Count
    propagated: bool
    cascades_left_out: Annotated[Count, Meta(description="Cascades not listed: a session of more than "
                                                         "10,000 events lists its 100 longest (0 otherwise)")]


class TimelineEntry(Struct):
    number: Annotated[Count, Meta(description="The event's place in the session, from 1")]
    timestamp: Timestamp
    elapsed_ms: float | None
    event_type: str
    description: str
    duration_ms: float | None
    is_error: bool
    event_id: str
    tool_name: str | None
    model: str | None
    tokens: Count
    slow: bool


class EventTypeCost(Struct):
    event_type: str
    events: Count
    tokens_in: Count
    tokens_out: Count
    cost_usd: float | None
    unpriced_tokens: Count


class CostBreakdown(Struct):
    total_usd: float | None
    by_model: list[ModelCost]
    by_event_type: list[EventTypeCost]
    failed_steps: FailedStepsCost
    unpriced_models: list[str]
    unpriced_tokens: Count


class FailureMode(Struct):
    fingerprint: str
    kind: str
    count: Count
    example: str


class ToolPerformance(Struct):
    tool_name: str
    calls: Count
    failures: Count
    success_rate: Percent
    p50_ms: float | None
    p95_ms: float | None
    slow_calls: Count
    failure_modes: list[FailureMode]


class ContributingFactor(Struct):
    factor: str
    category: Literal["change", "errors", "loop", "latency", "anomaly", "drift"]
    title: str
    likelihood: Annotated[float, Meta(ge=0, le=1)]
    evidence: list[str]
    action: str


class Recommendation(Struct):
    factor: str
    priority: Literal["high", "medium", "low"]
    action: str


class PostmortemReport(SessionCounts):
    session_id: str
    agent_name: str
    generated_at: Timestamp
    severity: Sev
    severity_reason: SevReason
    title: str
    summary: str
    status: SessionStatus
    started_at: Timestamp
    ended_at: str | None
    duration_ms: float | None
    timeline: Annotated[list[TimelineEntry], Meta(
        description="Every event; of a session of more than 10,000 events, the first and last 1,000 "
                    "and the first 1,000 errors between them")]
    timeline_left_out: Annotated[Count, Meta(description="Events the timeline leaves out (0 but for "
                                                         "a session of more than 10,000 events)")]
    error_cascade: ErrorCascade
    cost_breakdown: CostBreakdown
    tool_performance: list[ToolPerformance]
    contributing_factors: list[ContributingFactor]
    recommendations: list[Recommendation]
    markdown: Annotated[str, Meta(description="The whole report as Markdown")]


class PostmortemCandidates(Struct):
    candidates: list[PostmortemCandidate]
    total: Count
    incidents: Annotated[list[Incident], Meta(
        description="The incidents of the last `days` days (default the last 24 hours), at most 10")]


class IncidentImpact(Struct):
    session_id: str
    agent_name: str | None
    status: SessionStatus | None
    failures: Annotated[int, Meta(ge=0, description="This incident's failures in the session")]
    first_failure: Timestamp | None
    error_count: Count | None
    failed: Annotated[bool, Meta(description="The session's status is error")]


class IncidentFailure(Struct):
    timestamp: Timestamp
    session_id: str
    agent_name: str | None
    message: str


class PrecedingChange(Struct):
    change_id: str
    agent_name: str
    changed_at: Timestamp
    title: str
    status: Literal["regression", "improvement", "neutral"]
    acknowledged: bool


class IncidentRootCause(Struct):
    kind: str
    kind_title: str
    where: Annotated[str, Meta(description="The tool, else the model, else the event type that failed")]
    pattern: str
    example: str
    preceding_changes: Annotated[list[PrecedingChange], Meta(
        description="Changes of an affected agent's configuration in the 24 hours before the first failure")]


class IncidentRecommendation(Struct):
    priority: Literal["high", "medium", "low"]
    action: str


class IncidentPostmortem(Struct):
    incident_id: str
    generated_at: Timestamp
    title: str
    severity: Literal["SEV-1", "SEV-2", "SEV-3"]
    severity_reason: str
    incident: Incident
    summary: str
    impact: Annotated[list[IncidentImpact], Meta(description="The sessions hit, first 20 in order of failure")]
    timeline: Annotated[list[IncidentFailure], Meta(description="The failures in time order, first 200")]
    root_cause: IncidentRootCause
    overlapping: Annotated[list[Incident], Meta(
        description="Other incidents of 2+ sessions whose time overlaps this one, most severe first (5 at most)")]
    recommendations: list[IncidentRecommendation]
    markdown: Annotated[str, Meta(description="The whole report as Markdown")]


CANDIDATES_LIMIT = IntParam("limit", 1, 100, default=20, capped=True)
CANDIDATES_MIN_ERRORS = IntParam("min_errors", 0, MAX_COUNT, default=1)
CANDIDATES_DAYS = IntParam("days", 1, 3650)  # no default: every session


class CandidatesQuery(Struct, kw_only=True):
    min_errors: Annotated[int, within(CANDIDATES_MIN_ERRORS, description="Only sessions with at least "
                                                                         "this many errors")] | None = None
    limit: Annotated[int, within(CANDIDATES_LIMIT, description="Candidates to return")] | None = None
    agent: Annotated[str, Meta(description="Only this agent's sessions")] | None = None
    days: Annotated[int, within(CANDIDATES_DAYS, description="Only sessions started in the last N days; "
                                                             "default: all")] | None = None


CANDIDATES = Read("/postmortem/candidates", "obsctl.services.postmortem:postmortem_candidates",
                  CandidatesQuery, PostmortemCandidates,
                  summary="Sessions worth a postmortem: most severe first, then most errors, then newest",
                  tag="postmortem")


class IncidentPostmortemQuery(Struct, kw_only=True):
    since: Annotated[str, Meta(description="An age before until (30m, 24h, 7d, 2w) or an ISO 8601 time holding "
                                           "the incident's start; default 7d")] | None = None
    until: Annotated[str, Meta(description="ISO 8601; default now")] | None = None
    gap_minutes: Annotated[int, within(GAP_MINUTES, description="The gap the incident was listed with")] | None = None


INCIDENT_POSTMORTEM = Read(
    "/postmortem/incidents/{incident_id}", "obsctl.services.postmortem.incident:postmortem_incident",
    IncidentPostmortemQuery, IncidentPostmortem,
    summary="The postmortem of an incident (GET /incidents): impact, timeline, root cause, overlapping "
            "incidents, recommendations",
    tag="postmortem", errors=(400, 404), context=("pricer",),
    path_params=(PathParam("incident_id", "inc-..., as GET /incidents lists it", "incident {!r} not found"),))
