"""`GET /search`: full-text search over what events said (services/search.py)."""

from __future__ import annotations

from flask import Blueprint, request

from obsctl.models.search import SearchResult, SearchResults
from obsctl.services import search as service
from obsctl.web.http import get_store, int_arg, json_response, str_arg
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    query_param,
    ref,
)

blueprint = Blueprint("search", __name__)
RATE_GROUP = "sessions"  # it reads what sessions said: their per-IP limit


@blueprint.get("/search")
def search():
    args = request.args
    return json_response(service.search_events(
        get_store(), args.get("q"), agent=args.getlist("agent") or None, since=str_arg("since"),
        until=str_arg("until"), session=str_arg("session"), event_type=str_arg("type"),
        sort=str_arg("sort"), limit=int_arg("limit"), mark_start=args.get("mark_start"),
        mark_end=args.get("mark_end")))


OPENAPI_MODELS = (SearchResults, SearchResult)

_STRING = {"type": "string"}
OPENAPI_PATHS = {
    "/search": {
        "get": operation(
            "search",
            "Full-text search over event inputs, outputs, tool calls (with their errors) and "
            "reasoning: newest first or by rank, each with a highlighted snippet",
            params=[
                query_param("q", _STRING, 'Words (all must appear), "quoted phrases", prefixes like time*',
                            required=True),
                query_param("agent", {"type": "array", "items": _STRING},
                            "Only events of this agent's sessions (repeat for several)"),
                query_param("since", _STRING, "Events from this time: an age before until (30m, 24h, 1d) "
                                              "or an ISO 8601 time"),
                query_param("until", _STRING, "Events before this time, ISO 8601"),
                query_param("session", _STRING, "Only this session's events"),
                query_param("type", _STRING, "Only events of this type"),
                query_param("sort", {"type": "string", "enum": list(service.SORTS), "default": "time"},
                            "time: newest first; rank: best match first"),
                int_query_param(service.LIMIT, "Events to return"),
                query_param("mark_start", {"type": "string", "default": service.DEFAULT_MARKS[0]},
                            "Put before each matched word in snippets"),
                query_param("mark_end", {"type": "string", "default": service.DEFAULT_MARKS[1]},
                            "Put after each matched word in snippets"),
            ],
            ok=json_content(ref(SearchResults)),
            errors=error_responses(400, 504),
        ),
    },
}
