"""OpenAPI schemas of the explain, export and compare responses (kept out of the routes)."""

from __future__ import annotations

_NULLABLE_STRING = {"type": ["string", "null"]}
_NULLABLE_INT = {"type": ["integer", "null"]}
_NULLABLE_NUMBER = {"type": ["number", "null"]}
_JSON_OBJECT = {"type": ["object", "null"]}
_STRINGS = {"type": "array", "items": {"type": "string"}}

EXPORT_EVENT = {
    "type": "object",
    "required": ["event_id", "event_type", "timestamp", "model", "tokens_in", "tokens_out",
                 "duration_ms", "input_data", "output_data", "tool_call", "decision_trace"],
    "properties": {
        "event_id": {"type": "string"},
        "event_type": {"type": "string"},
        "timestamp": {"$ref": "#/components/schemas/Timestamp"},
        "model": _NULLABLE_STRING,
        "tokens_in": _NULLABLE_INT,
        "tokens_out": _NULLABLE_INT,
        "duration_ms": _NULLABLE_NUMBER,
        "input_data": _JSON_OBJECT,
        "output_data": _JSON_OBJECT,
        "tool_call": _JSON_OBJECT,
        "decision_trace": _JSON_OBJECT,
    },
}

SESSION_EXPORT = {
    "type": "object",
    "description": "Spec 2.3. summary.total_tokens and total_duration_ms are sums over the "
                   "exported events; models_used and event_types are sorted.",
    "required": ["exported_at", "session", "events", "summary"],
    "properties": {
        "exported_at": {"$ref": "#/components/schemas/Timestamp"},
        "session": {
            "type": "object",
            "required": ["session_id", "agent_name", "status", "started_at", "ended_at",
                         "total_tokens_in", "total_tokens_out", "metadata"],
            "properties": {
                "session_id": {"type": "string"},
                "agent_name": {"type": "string"},
                "status": {"type": "string", "enum": ["active", "completed", "error"]},
                "started_at": {"$ref": "#/components/schemas/Timestamp"},
                "ended_at": _NULLABLE_STRING,
                "total_tokens_in": {"type": "integer"},
                "total_tokens_out": {"type": "integer"},
                "metadata": _JSON_OBJECT,
            },
        },
        "events": {"type": "array", "items": {"$ref": "#/components/schemas/ExportEvent"}},
        "summary": {
            "type": "object",
            "required": ["total_events", "total_tokens", "models_used", "event_types",
                         "total_duration_ms"],
            "properties": {
                "total_events": {"type": "integer", "minimum": 0},
                "total_tokens": {"type": "integer", "minimum": 0},
                "models_used": _STRINGS,
                "event_types": _STRINGS,
                "total_duration_ms": {"type": "number", "minimum": 0},
            },
        },
    },
}

SESSION_SUMMARY = {
    "type": "object",
    "required": ["session_id", "agent_name", "status", "tokens_in", "tokens_out", "total_tokens",
                 "event_count", "error_count", "total_processing_ms", "avg_event_duration_ms",
                 "session_duration_ms", "models", "event_types", "tools", "metadata"],
    "properties": {
        "session_id": {"type": "string"},
        "agent_name": {"type": "string"},
        "status": {"type": "string", "enum": ["active", "completed", "error"]},
        "tokens_in": {"type": "integer"},
        "tokens_out": {"type": "integer"},
        "total_tokens": {"type": "integer"},
        "event_count": {"type": "integer"},
        "error_count": {"type": "integer"},
        "total_processing_ms": {"type": "number", "description": "Sum of the events' duration_ms"},
        "avg_event_duration_ms": {"type": "number",
                                  "description": "Mean over events that have a duration; 0 if none"},
        "session_duration_ms": {**_NULLABLE_NUMBER,
                                "description": "started_at to ended_at (to the last event while active)"},
        "models": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["calls", "tokens_in", "tokens_out"],
            "properties": {"calls": {"type": "integer"}, "tokens_in": {"type": "integer"},
                           "tokens_out": {"type": "integer"}}}},
        "event_types": {"type": "object", "additionalProperties": {"type": "integer"}},
        "tools": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["calls", "total_duration"],
            "properties": {"calls": {"type": "integer"}, "total_duration": {"type": "number"}}}},
        "metadata": _JSON_OBJECT,
    },
}

_DELTA = {
    "type": "object",
    "required": ["absolute", "percent"],
    "properties": {
        "absolute": {"type": "number", "description": "B minus A"},
        "percent": {**_NULLABLE_NUMBER, "description": "(B - A) / A x 100, 2 decimals; null when A is 0"},
    },
}

DELTA_KEYS = ("total_tokens", "tokens_in", "tokens_out", "event_count", "error_count",
              "total_processing_ms", "avg_event_duration_ms")

SESSION_COMPARISON = {
    "type": "object",
    "required": ["compared_at", "session_a", "session_b", "deltas", "shared"],
    "properties": {
        "compared_at": {"$ref": "#/components/schemas/Timestamp"},
        "session_a": {"$ref": "#/components/schemas/SessionSummary"},
        "session_b": {"$ref": "#/components/schemas/SessionSummary"},
        "deltas": {"type": "object", "required": list(DELTA_KEYS),
                   "properties": {key: _DELTA for key in DELTA_KEYS}},
        "shared": {"type": "object", "required": ["event_types", "tools", "models"],
                   "properties": {"event_types": _STRINGS, "tools": _STRINGS, "models": _STRINGS}},
    },
}

SCHEMAS = {
    "ExportEvent": EXPORT_EVENT,
    "SessionExport": SESSION_EXPORT,
    "SessionSummary": SESSION_SUMMARY,
    "SessionComparison": SESSION_COMPARISON,
    "SessionExplanation": {
        "type": "object",
        "required": ["session_id", "explanation"],
        "properties": {"session_id": {"type": "string"},
                       "explanation": {"type": "string", "description": "Markdown"}},
    },
}
