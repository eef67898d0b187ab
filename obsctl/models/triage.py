"""The triage report (`GET /triage/<session_id>`, `GET /triage/batch`), as declared models."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from obsctl.models.changes import Change
from obsctl.models.common import (
    SAME_AS_ERROR_EVENT_RATE,
    Count,
    FailedStepsCost,
    Grade,
    JsonObject,
    ModelCost,
    Percent,
    SessionCounts,
    Timestamp,
    enum_of,
    rate_of,
    within,
)
from obsctl.models.incidents import Incident
from obsctl.models.reads import SESSION_ID, NoParameters, Read
from obsctl.params import MAX_COUNT, IntParam

BASES = ("agent", "configuration", "before_change")

Severity = Literal["info", "warning", "critical"]


class TriageFinding(Struct):
    category: Literal["change", "errors", "tools", "latency", "cost", "anomaly", "drift", "loop"]
    severity: Severity
    title: str
    detail: str
    suggestion: str
    evidence: Annotated[JsonObject, Meta(description="The facts behind the finding (per category)")]


class ErrorGroup(Struct):
    fingerprint: str
    count: Count
    event_type: str
    tool_name: str | None
    kind: str
    pattern: str
    example: str
    first_seen: Timestamp
    last_seen: Timestamp


class BaselineMetric(Struct):
    value: float | None
    median: float | None
    scale: float | None
    robust_z: float | None
    change_pct: float | None
    status: Literal["normal", "anomaly", "drift", "no_data"]
    severity: Severity | None


class TriageMetrics(SessionCounts):
    duration_ms: float | None
    total_tokens: Count
    error_rate: Annotated[Percent, rate_of("error_event_rate", SAME_AS_ERROR_EVENT_RATE)]
    tokens_in: Count
    tokens_out: Count
    processing_ms: float
    cost_usd: float | None


class TriagePenalties(Struct):
    errors: float
    tools: float
    loops: float
    latency: float
    baseline: float
    cost: float
    severity: Annotated[float, Meta(description=(
        "What the severity takes beyond the other terms: at most 64.9 (C) when critical, 89.9 (B+) "
        "with a warning, 94.9 (A) with an info finding"))]


class TriageToolStats(Struct):
    tool_name: str
    calls: Count
    failures: Count
    failure_rate_pct: float
    slow_calls: Count
    p50_ms: float | None
    p95_ms: float | None


class TriageLoop(Struct):
    tool_name: str
    count: Count
    input: str | None
    failures: Count
    first_seen: Timestamp
    last_seen: Timestamp


class TriageBaseline(Struct):
    window_days: Count
    since: Timestamp
    until: Timestamp
    sessions: Count
    required: Count
    sufficient: bool
    note: str | None
    basis: Annotated[str, enum_of(BASES), Meta(
        description="Which of the agent's sessions make the baseline: all of them (agent), those of "
                    "the session's model and release (configuration), or those before an "
                    "unacknowledged regression (before_change)")]
    change: Annotated[Change | None, Meta(
        description="The change (GET /changes) that brought the session's configuration, if in the window")]
    metrics: dict[str, BaselineMetric]


class TriageCost(Struct):
    total_usd: float | None
    by_model: list[ModelCost]
    unpriced_models: list[str]
    unpriced_tokens: Count
    failed_steps: FailedStepsCost


class TriageReport(Struct):
    session_id: str
    agent_name: str
    status: Literal["active", "completed", "error"]
    health_score: Percent
    grade: Grade
    severity: Literal["healthy", "info", "warning", "critical"]
    findings: list[TriageFinding]
    metrics: TriageMetrics
    score_penalties: TriagePenalties
    error_groups: list[ErrorGroup]
    tools: list[TriageToolStats]
    loops: list[TriageLoop]
    baseline: TriageBaseline
    cost: TriageCost


class TriageBatch(Struct):
    reports: list[TriageReport]
    total: Annotated[int, Meta(ge=0, description="Sessions matching the filters (reports covers "
                                                 "the most recent `limit` of them)")]
    incidents: Annotated[list[Incident], Meta(
        description="The incidents of the window (since/until; default the last 24 hours), at most 10: "
                    "the failures these sessions share with others")]


BATCH_LIMIT = IntParam("limit", 1, 100, default=10, capped=True)
BATCH_MIN_EVENTS = IntParam("min_events", 0, MAX_COUNT, default=1)


class TriageBatchQuery(Struct, kw_only=True):
    limit: Annotated[int, within(BATCH_LIMIT, description="Sessions to triage")] | None = None
    min_events: Annotated[int, within(BATCH_MIN_EVENTS, description="Only sessions with at least this many "
                                                                     "events")] | None = None
    agent: Annotated[str, Meta(description="Only this agent's sessions")] | None = None
    since: Annotated[str, Meta(description="Only sessions started since: an age before until (24h, 7d) or an "
                                           "ISO 8601 time")] | None = None
    until: Annotated[str, Meta(description="Only sessions started before this ISO 8601 time")] | None = None


# A fixed route: Werkzeug ranks literal segments above /triage/<session_id>. A session named
# "batch" is reached with the name escaped, `/triage/%62atch` (web/rawpath.py), as obsctl's
# client does.
TRIAGE_BATCH = Read("/triage/batch", "obsctl.services.triage:triage_batch", TriageBatchQuery, TriageBatch,
                    summary="Triage the most recent sessions, worst health score first", tag="triage",
                    context=("pricer",))
TRIAGE_SESSION = Read("/triage/{session_id}", "obsctl.services.triage:triage_session", NoParameters, TriageReport,
                      summary="Triage one session: health score, grade, severity-ranked findings", tag="triage",
                      errors=(404,), context=("pricer",), path_params=(SESSION_ID,))
