"""OpenAPI schemas of the triage report (and the cost parts the postmortem shares)."""

from __future__ import annotations

from obsctl.web.openapi_util import rate_field

TS = {"$ref": "#/components/schemas/Timestamp"}
NUM_OR_NULL = {"type": ["number", "null"]}
STR_OR_NULL = {"type": ["string", "null"]}
INT = {"type": "integer", "minimum": 0}
PERCENT = {"type": "number", "minimum": 0, "maximum": 100}
SAME_AS_ERROR_EVENT_RATE = "The error_event_rate under the spec's name"

# A session's event counts and error event rate, in triage metrics, postmortem reports and
# candidates alike (services/rates.py SessionEventCounts.view).
SESSION_COUNTS = {
    "event_count": rate_field("event_count", INT),
    "error_count": rate_field("error_count", INT),
    "body_events": rate_field("body_events", INT),
    "error_events": rate_field("error_events", INT),
    "error_event_rate": rate_field("error_event_rate", PERCENT),
}


def strict(**properties) -> dict:
    """An object schema in which every listed property is required."""
    return {"type": "object", "required": list(properties), "properties": properties}


MODEL_COST = strict(model=STR_OR_NULL, calls=INT, tokens_in=INT, tokens_out=INT, cost_usd=NUM_OR_NULL,
                    priced={"type": "boolean"})
FAILED_STEPS = strict(events=INT, tokens_in=INT, tokens_out=INT, total_tokens=INT, cost_usd=NUM_OR_NULL,
                      token_share_pct={"type": "number"})
SEVERITY = {"type": "string", "enum": ["info", "warning", "critical"]}

TRIAGE_SCHEMAS = {
    "TriageFinding": strict(
        category={"type": "string",
                  "enum": ["errors", "tools", "latency", "cost", "anomaly", "drift", "loop"]},
        severity=SEVERITY,
        title={"type": "string"},
        detail={"type": "string"},
        suggestion={"type": "string"},
        evidence={"type": "object", "description": "The facts behind the finding (per category)"},
    ),
    "ErrorGroup": strict(
        fingerprint={"type": "string"}, count=INT, event_type={"type": "string"},
        tool_name=STR_OR_NULL, kind={"type": "string"}, pattern={"type": "string"},
        example={"type": "string"}, first_seen=TS, last_seen=TS,
    ),
    "BaselineMetric": strict(
        value=NUM_OR_NULL, median=NUM_OR_NULL, scale=NUM_OR_NULL, robust_z=NUM_OR_NULL,
        change_pct=NUM_OR_NULL,
        status={"type": "string", "enum": ["normal", "anomaly", "drift", "no_data"]},
        severity={"type": ["string", "null"], "enum": ["info", "warning", "critical", None]},
    ),
    "ModelCost": MODEL_COST,
    "FailedStepsCost": FAILED_STEPS,
    "TriageReport": strict(
        session_id={"type": "string"},
        agent_name={"type": "string"},
        status={"type": "string", "enum": ["active", "completed", "error"]},
        health_score={"type": "number", "minimum": 0, "maximum": 100},
        grade={"type": "string", "enum": ["A+", "A", "B+", "B", "B-", "C+", "C", "D", "F"]},
        severity={"type": "string", "enum": ["healthy", "info", "warning", "critical"]},
        findings={"type": "array", "items": {"$ref": "#/components/schemas/TriageFinding"}},
        metrics=strict(
            duration_ms=NUM_OR_NULL, total_tokens=INT, **SESSION_COUNTS,
            error_rate=rate_field("error_event_rate", PERCENT, SAME_AS_ERROR_EVENT_RATE),
            tokens_in=INT, tokens_out=INT, processing_ms={"type": "number"}, cost_usd=NUM_OR_NULL,
        ),
        score_penalties=strict(errors={"type": "number"}, tools={"type": "number"},
                               loops={"type": "number"}, latency={"type": "number"},
                               baseline={"type": "number"}),
        error_groups={"type": "array", "items": {"$ref": "#/components/schemas/ErrorGroup"}},
        tools={"type": "array", "items": strict(
            tool_name={"type": "string"}, calls=INT, failures=INT,
            failure_rate_pct={"type": "number"}, slow_calls=INT, p50_ms=NUM_OR_NULL,
            p95_ms=NUM_OR_NULL)},
        loops={"type": "array", "items": strict(
            tool_name={"type": "string"}, count=INT, input=STR_OR_NULL, failures=INT,
            first_seen=TS, last_seen=TS)},
        baseline=strict(
            window_days=INT, since=TS, until=TS, sessions=INT, required=INT,
            sufficient={"type": "boolean"}, note=STR_OR_NULL,
            metrics={"type": "object",
                     "additionalProperties": {"$ref": "#/components/schemas/BaselineMetric"}},
        ),
        cost=strict(
            total_usd=NUM_OR_NULL,
            by_model={"type": "array", "items": {"$ref": "#/components/schemas/ModelCost"}},
            unpriced_models={"type": "array", "items": {"type": "string"}},
            unpriced_tokens=INT,
            failed_steps={"$ref": "#/components/schemas/FailedStepsCost"},
        ),
    ),
}
