"""`/scorecards`: letter-grade scorecards per agent."""

from __future__ import annotations

from flask import Blueprint

from obsctl.services import scorecards as service
from obsctl.services.scorecards.scoring import DIMENSIONS
from obsctl.web.http import get_settings, get_store, int_arg, json_response
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    path_param,
    rate_field,
)

blueprint = Blueprint("scorecards", __name__)
RATE_GROUP = "scorecards"


@blueprint.get("/scorecards")
def list_scorecards():
    return json_response(service.list_scorecards(get_store(), get_settings(), days=int_arg("days")))


@blueprint.get("/scorecards/<path:agent>")
def get_scorecard(agent: str):
    return json_response(service.get_scorecard(get_store(), get_settings(), agent,
                                               days=int_arg("days")))


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


_SCORE = {"type": "number", "minimum": 0, "maximum": 100}
_SCORE_OR_NULL = {"type": ["number", "null"], "minimum": 0, "maximum": 100}
_GRADE = {"type": "string", "enum": ["A+", "A", "B+", "B", "B-", "C+", "C", "D", "F"]}
_COUNT = {"type": "integer", "minimum": 0}
_NUMBER_OR_NULL = {"type": ["number", "null"]}


def _object(properties: dict) -> dict:
    return {"type": "object", "required": list(properties), "properties": properties}


OPENAPI_SCHEMAS = {
    "Scorecard": _object({
        "agent": {"type": "string"},
        "overall_score": _SCORE,
        "grade": _GRADE,
        "dimensions": _object({name: _object({"score": _SCORE, "grade": _GRADE})
                               for name in DIMENSIONS}),
        "sessions_analyzed": {"type": "integer", "minimum": 1},
        "period_days": {"type": "integer", "minimum": 1, "maximum": 365},
    }),
    "ScorecardDetail": {"allOf": [_ref("Scorecard"), _object({
        "since": _ref("Timestamp"),
        "until": _ref("Timestamp"),
        "fleet_agents": {"type": "integer", "minimum": 1},
        "breakdown": _object({
            "reliability": _object({
                "body_events": rate_field("body_events", _COUNT),
                "error_events": rate_field("error_events", _COUNT),
                "error_event_rate": rate_field("error_event_rate", _SCORE_OR_NULL,
                                               "null without body events"),
                "sessions": rate_field("sessions", _COUNT),
                "error_sessions": rate_field("error_sessions", _COUNT),
                "error_session_rate": rate_field("error_session_rate", _SCORE),
                "event_score": _SCORE, "session_score": _SCORE,
            }),
            "performance": _object({
                "timed_events": _COUNT, "p50_duration_ms": _NUMBER_OR_NULL,
                "p95_duration_ms": _NUMBER_OR_NULL, "fleet_p50_duration_ms": _NUMBER_OR_NULL,
                "fleet_p95_duration_ms": _NUMBER_OR_NULL, "p50_score": _SCORE_OR_NULL,
                "p95_score": _SCORE_OR_NULL,
            }),
            "efficiency": _object({
                "tokens": _COUNT, "tokens_per_session": {"type": "number"},
                "fleet_tokens_per_session": {"type": "number"},
                "cost_usd": _NUMBER_OR_NULL, "cost_per_session": _NUMBER_OR_NULL,
                "fleet_cost_per_session": _NUMBER_OR_NULL, "tokens_score": _SCORE,
                "cost_score": _SCORE_OR_NULL,
            }),
            "throughput": _object({
                "sessions": _COUNT, "completed_sessions": _COUNT, "completion_rate": _SCORE,
                "fleet_sessions": {"type": "number"}, "volume_score": _SCORE,
                "completion_score": _SCORE,
            }),
        }),
        "trend": {"type": "array", "items": _object({
            "day": {"type": "string", "format": "date", "description": "UTC date of the day's start"},
            "start": _ref("Timestamp"),
            "end": _ref("Timestamp"),
            "sessions": _COUNT,
            "body_events": rate_field("body_events", _COUNT),
            "error_events": rate_field("error_events", _COUNT),
            "error_event_rate": rate_field("error_event_rate", _SCORE_OR_NULL,
                                           "null without body events"),
            "error_rate": rate_field("error_event_rate", _SCORE_OR_NULL,
                                     "The day's error_event_rate under its original name; "
                                     "null without body events"),
            "overall_score": _SCORE_OR_NULL,
            "grade": {"type": ["string", "null"]},
        })},
    })]},
}

_DAYS = int_query_param(service.DAYS, "Lookback window in days")

OPENAPI_PATHS = {
    "/scorecards": {
        "get": operation(
            "scorecards", "Scorecards of every agent with a session in the window, best first",
            params=[_DAYS],
            ok=json_content({"type": "array", "items": _ref("Scorecard")}),
            errors=error_responses(400),
        ),
    },
    "/scorecards/{agent}": {
        "get": operation(
            "scorecards", "One agent's scorecard with its breakdown and daily trend",
            params=[path_param("agent", "Agent name"), _DAYS],
            ok=json_content(_ref("ScorecardDetail")),
            errors=error_responses(400, 404),
        ),
    },
}
