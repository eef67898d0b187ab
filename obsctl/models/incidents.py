"""`GET /incidents`, as declared models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from obsctl.models.common import Count, Timestamp, enum_of, within
from obsctl.models.reads import Read
from obsctl.params import IntParam

SEVERITIES = ("SEV-1", "SEV-2", "SEV-3")
KINDS = ("rate_limit", "timeout", "context_length", "auth", "not_found", "invalid_input", "server",
         "network", "other")


class Incident(Struct):
    incident_id: Annotated[str, Meta(description="inc- and a digest of what failed and when it started")]
    title: Annotated[str, Meta(description="What failed, how often, where and when, in one line")]
    severity: Annotated[str, enum_of(SEVERITIES), Meta(
        description="SEV-1: 3+ agents or 10+ sessions; SEV-2: 2 agents or 3+ sessions; SEV-3: the rest")]
    severity_reason: str
    kind: Annotated[str, enum_of(KINDS)]
    kind_title: str
    fingerprint: Annotated[str, Meta(description="The error group's fingerprint, as in triage")]
    event_type: str
    tool_name: str | None
    model: str | None
    pattern: Annotated[str, Meta(description="The error message with its variable parts masked")]
    example: str
    failures: Annotated[int, Meta(ge=1)]
    sessions: Annotated[int, Meta(ge=1)]
    agents: Count
    first_seen: Timestamp
    last_seen: Timestamp
    duration_ms: Count
    session_ids: Annotated[list[str], Meta(description="The sessions affected, first 20 in order of failure")]
    agent_names: Annotated[list[str], Meta(description="The agents affected, first 20")]


class IncidentList(Struct):
    since: Timestamp
    until: Timestamp
    total: Count
    incidents: list[Incident]
    errors_scanned: Annotated[int, Meta(ge=0, description="Error events read in the window")]
    truncated: Annotated[bool, Meta(
        description="More than 100,000 error events in the window: only the first were grouped")]


MIN_SESSIONS = IntParam("min_sessions", 1, 1000, default=2)
GAP_MINUTES = IntParam("gap_minutes", 1, 1440, default=30)
LIMIT = IntParam("limit", 1, 200, default=50)


class IncidentsQuery(Struct, kw_only=True):
    since: Annotated[str, Meta(description="An age before until (30m, 24h, 7d, 2w) or an ISO 8601 time; "
                                           "default 24h")] | None = None
    until: Annotated[str, Meta(description="ISO 8601; default now")] | None = None
    agent: Annotated[str, Meta(description="Only this agent's failures")] | None = None
    min_sessions: Annotated[int, within(MIN_SESSIONS, description="Sessions a failure must reach to be "
                                                                  "an incident")] | None = None
    gap_minutes: Annotated[int, within(GAP_MINUTES, description="A pause this long ends an incident")] | None = None
    limit: Annotated[int, within(LIMIT, description="Incidents to return")] | None = None


INCIDENTS = Read("/incidents", "obsctl.services.incidents:list_incidents", IncidentsQuery, IncidentList,
                 summary="Incidents: the same failure (error fingerprint, tool, model) in several sessions, "
                         "most severe first",
                 tag="incidents")
