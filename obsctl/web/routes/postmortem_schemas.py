"""OpenAPI schemas of the postmortem report and the candidates list."""

from __future__ import annotations

from obsctl.web.openapi_util import rate_field
from obsctl.web.routes.triage_schemas import (
    INT,
    NUM_OR_NULL,
    PERCENT,
    SAME_AS_ERROR_EVENT_RATE,
    SESSION_COUNTS,
    STR_OR_NULL,
    TS,
    strict,
)

SEV = {"type": "string", "enum": ["SEV-1", "SEV-2", "SEV-3", "SEV-4", "none"]}
STATUS = {"type": "string", "enum": ["active", "completed", "error"]}
STRINGS = {"type": "array", "items": {"type": "string"}}
SEV_REASON = {"type": "string",
              "description": "Why the severity: the counts and the threshold that decided it"}

CASCADE_ERROR = strict(
    event_id={"type": "string"}, timestamp=TS, elapsed_ms=NUM_OR_NULL, event_type={"type": "string"},
    tool_name=STR_OR_NULL, kind={"type": "string"}, message=STR_OR_NULL,
    caused_by=STR_OR_NULL,
    relation={"type": ["string", "null"], "enum": ["retry", "same_tool", "followed", "parent", None]},
)

CASCADE = strict(
    cascade={"type": "integer", "minimum": 1}, length={"type": "integer", "minimum": 1},
    path={"type": "string"},
    root_cause=strict(event_id={"type": "string"}, event_type={"type": "string"},
                      tool_name=STR_OR_NULL, kind={"type": "string"}, message=STR_OR_NULL),
    started_at=TS, ended_at=TS, span_ms={"type": "number"}, recovered={"type": "boolean"},
    errors={"type": "array", "items": CASCADE_ERROR},
)

POSTMORTEM_SCHEMAS = {
    "PostmortemCandidate": strict(
        session_id={"type": "string"}, agent_name={"type": "string"}, started_at=TS, status=STATUS,
        **SESSION_COUNTS,
        error_rate=rate_field("error_event_rate", PERCENT, SAME_AS_ERROR_EVENT_RATE),
        severity=SEV, severity_reason=SEV_REASON,
    ),
    "PostmortemReport": strict(
        session_id={"type": "string"},
        agent_name={"type": "string"},
        generated_at=TS,
        severity=SEV,
        severity_reason=SEV_REASON,
        **SESSION_COUNTS,
        title={"type": "string"},
        summary={"type": "string"},
        status=STATUS,
        started_at=TS,
        ended_at=STR_OR_NULL,
        duration_ms=NUM_OR_NULL,
        timeline={"type": "array", "items": strict(
            timestamp=TS, elapsed_ms=NUM_OR_NULL, event_type={"type": "string"},
            description={"type": "string"}, duration_ms=NUM_OR_NULL, is_error={"type": "boolean"},
            event_id={"type": "string"}, tool_name=STR_OR_NULL, model=STR_OR_NULL, tokens=INT,
            slow={"type": "boolean"})},
        error_cascade=strict(total_errors=INT, cascades={"type": "array", "items": CASCADE},
                             longest=INT, propagated={"type": "boolean"}),
        cost_breakdown=strict(
            total_usd=NUM_OR_NULL,
            by_model={"type": "array", "items": {"$ref": "#/components/schemas/ModelCost"}},
            by_event_type={"type": "array", "items": strict(
                event_type={"type": "string"}, events=INT, tokens_in=INT, tokens_out=INT,
                cost_usd=NUM_OR_NULL, unpriced_tokens=INT)},
            failed_steps={"$ref": "#/components/schemas/FailedStepsCost"},
            unpriced_models=STRINGS,
            unpriced_tokens=INT,
        ),
        tool_performance={"type": "array", "items": strict(
            tool_name={"type": "string"}, calls=INT, failures=INT,
            success_rate={"type": "number", "minimum": 0, "maximum": 100},
            p50_ms=NUM_OR_NULL, p95_ms=NUM_OR_NULL, slow_calls=INT,
            failure_modes={"type": "array", "items": strict(
                fingerprint={"type": "string"}, kind={"type": "string"}, count=INT,
                example={"type": "string"})})},
        contributing_factors={"type": "array", "items": strict(
            factor={"type": "string"},
            category={"type": "string", "enum": ["errors", "loop", "latency", "anomaly", "drift"]},
            title={"type": "string"}, likelihood={"type": "number", "minimum": 0, "maximum": 1},
            evidence=STRINGS, action={"type": "string"})},
        recommendations={"type": "array", "items": strict(
            factor={"type": "string"}, priority={"type": "string", "enum": ["high", "medium", "low"]},
            action={"type": "string"})},
        markdown={"type": "string", "description": "The whole report as Markdown"},
    ),
}
