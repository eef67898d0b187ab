"""`GET /search` (`obsctl search`), as declared models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from obsctl.models.common import Count, Timestamp, enum_of, within
from obsctl.models.reads import Read
from obsctl.params import IntParam

SEARCH_FIELDS = ("input_data", "output_data", "tool_call", "decision_trace")


class SearchResult(Struct):
    event_id: str
    session_id: str
    agent_name: Annotated[str, Meta(description="The session's agent")]
    event_type: str
    timestamp: Timestamp
    field: Annotated[Annotated[str, enum_of(SEARCH_FIELDS)] | None, Meta(description="The first field that matched")]
    snippet: Annotated[str | None, Meta(
        description="Words around the match in that field's JSON text, the matched words between "
                    "mark_start and mark_end ([ and ] unless asked otherwise), … where text is cut")]


class SearchResults(Struct):
    query: Annotated[str, Meta(description="q as given")]
    sort: Annotated[str, enum_of(("time", "rank")), Meta(description="time: newest first; rank: best match first")]
    since: Annotated[Timestamp | None, Meta(description="Start of the window searched, when given")]
    until: Annotated[Timestamp | None, Meta(description="End of the window searched, when given")]
    count: Count
    more: Annotated[bool, Meta(description="More events match than the limit returned")]
    results: list[SearchResult]


SORTS = ("time", "rank")
LIMIT = IntParam("limit", 1, 200, default=20, capped=True)
DEFAULT_MARKS = ("[", "]")
_EMPTY_IS_A_MARK = {"keep_empty": True}  # mark_start= : no mark at all


class SearchQuery(Struct, kw_only=True):
    q: Annotated[str, Meta(description='Words (all must appear), "quoted phrases", prefixes like time*')]
    agent: Annotated[list[str], Meta(description="Only events of this agent's sessions (repeat for several)")] | None = None
    since: Annotated[str, Meta(description="Events from this time: an age before until (30m, 24h, 1d) "
                                           "or an ISO 8601 time")] | None = None
    until: Annotated[str, Meta(description="Events before this time, ISO 8601")] | None = None
    session: Annotated[str, Meta(description="Only this session's events")] | None = None
    event_type: Annotated[str, Meta(description="Only events of this type", extra={"aliases": ("type",)})] | None = None
    sort: Annotated[str, enum_of(SORTS), Meta(description="time: newest first; rank: best match first")] = "time"
    limit: Annotated[int, within(LIMIT, description="Events to return")] | None = None
    mark_start: Annotated[str, Meta(description="Put before each matched word in snippets",
                                    extra_json_schema={"default": DEFAULT_MARKS[0]}, extra=_EMPTY_IS_A_MARK)] | None = None
    mark_end: Annotated[str, Meta(description="Put after each matched word in snippets",
                                  extra_json_schema={"default": DEFAULT_MARKS[1]}, extra=_EMPTY_IS_A_MARK)] | None = None


SEARCH = Read("/search", "obsctl.services.search:search_events", SearchQuery, SearchResults,
              summary="Full-text search over event inputs, outputs, tool calls (with their errors) and "
                      "reasoning: newest first or by rank, each with a highlighted snippet",
              tag="search", errors=(400, 504))
