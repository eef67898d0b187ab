"""`/scorecards`: letter-grade scorecards per agent."""

from __future__ import annotations

from flask import Blueprint

from obsctl.models.scorecards import Scorecard, ScorecardDetail
from obsctl.services import scorecards as service
from obsctl.web.http import get_settings, get_store, int_arg, json_response
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    path_param,
    ref,
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


OPENAPI_MODELS = (Scorecard, ScorecardDetail)

_DAYS = int_query_param(service.DAYS, "Lookback window in days")

OPENAPI_PATHS = {
    "/scorecards": {
        "get": operation(
            "scorecards", "Scorecards of every agent with a session in the window, best first",
            params=[_DAYS],
            ok=json_content({"type": "array", "items": ref(Scorecard)}),
            errors=error_responses(400),
        ),
    },
    "/scorecards/{agent}": {
        "get": operation(
            "scorecards", "One agent's scorecard with its breakdown and daily trend",
            params=[path_param("agent", "Agent name"), _DAYS],
            ok=json_content(ref(ScorecardDetail)),
            errors=error_responses(400, 404),
        ),
    },
}
