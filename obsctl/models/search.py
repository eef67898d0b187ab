"""`GET /search` (`obsctl search`), as declared models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from obsctl.models.common import Count, Timestamp, enum_of

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
