"""Incidents: the same failure across sessions, grouped into one thing to page about.

A tool outage shows up as separate errors in separate sessions of separate agents; a
rate-limit cascade as one 429 in each of several sessions. Here the error events of a time
window are grouped by what failed (the error fingerprint of triage: event type, tool and the
message with its variable parts masked) and by model, and each group is cut where it goes
quiet for longer than `gap_minutes`. A group that reaches `min_sessions` sessions is an
incident, with its own severity:

    SEV-1  3 or more agents, or 10 or more sessions
    SEV-2  2 agents, or 3 or more sessions
    SEV-3  any other incident (2 sessions of one agent, by default)

A single session failing again and again is that session's problem (its triage says so), not
an incident.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import timedelta

import orjson

from obsctl.errors import NotFound
from obsctl.models.incidents import GAP_MINUTES, LIMIT, MIN_SESSIONS
from obsctl.services.error_kinds import KIND_TITLES, classify_error, fingerprint, normalise_message
from obsctl.services.sessions.fields import error_message, excerpt, main_text
from obsctl.services.windows import (  # noqa: F401 (re-exported)
    DEFAULT_SINCE,
    check_since,
    check_until,
    optional_window,
    window,
)
from obsctl.store import Store
from obsctl.text import plural
from obsctl.timeutil import parse_ts

FIND_SINCE = "7d"
TIMELINE_CAP = 200
# Error events read per request at most: a window holding more is reported as truncated.
MAX_ERRORS = 100_000
# Sessions and agents named in an incident (the counts are always complete).
NAMED = 20
MESSAGE_CHARS = 200
SEVERITIES = ("SEV-1", "SEV-2", "SEV-3")
SEV1_AGENTS, SEV1_SESSIONS = 3, 10
SEV2_AGENTS, SEV2_SESSIONS = 2, 3


@dataclass
class _Group:
    """Failures with one key, cut into runs by the gap."""

    key: tuple[str, str | None]
    event_type: str
    tool_name: str | None
    model: str | None
    pattern: str
    kind: str
    example: str
    first_seen: str
    last_seen: str
    failures: int = 0
    sessions: dict[str, None] = field(default_factory=dict)  # insertion-ordered sets
    agents: dict[str, None] = field(default_factory=dict)
    seen: list[tuple] = field(default_factory=list)  # (timestamp, session, agent, message), the first TIMELINE_CAP


def list_incidents(store: Store, *, since: str | None = None, until: str | None = None,
                   agent: str | None = None, min_sessions: int | None = None,
                   gap_minutes: int | None = None, limit: int | None = None) -> dict:
    """The incidents of [since, until), most severe first, then most failures, then earliest."""
    start, end = window(since, until)
    min_sessions = MIN_SESSIONS.resolve(min_sessions)
    gap = timedelta(minutes=GAP_MINUTES.resolve(gap_minutes))
    limit = LIMIT.resolve(limit)
    rows = store.triage.error_events(start, end, agent, MAX_ERRORS + 1)
    truncated = len(rows) > MAX_ERRORS
    groups = _group(rows[:MAX_ERRORS], gap)
    incidents = [_view(g) for g in groups if len(g.sessions) >= min_sessions]
    incidents.sort(key=lambda i: (SEVERITIES.index(i["severity"]), -i["failures"], i["first_seen"],
                                  i["incident_id"]))
    return {"since": start, "until": end, "total": len(incidents), "incidents": incidents[:limit],
            "errors_scanned": min(len(rows), MAX_ERRORS), "truncated": truncated}


def find_incident(store: Store, incident_id: str, *, since: str | None = None, until: str | None = None,
                  gap_minutes: int | None = None) -> dict:
    """One incident of [since, until) (default the last 7 days) by its id, whatever its size:
    `{"incident", "failures": [{timestamp, session_id, agent_name, message}] (the first 200),
    "overlapping": [the other incidents of 2+ sessions whose time overlaps it], "since", "until"}`;
    NotFound when no failure group of the window has that id."""
    start, end = window(since if since is not None else FIND_SINCE, until)
    gap = timedelta(minutes=GAP_MINUTES.resolve(gap_minutes))
    rows = store.triage.error_events(start, end, None, MAX_ERRORS + 1)
    groups = _group(rows[:MAX_ERRORS], gap)
    views = [(_view(g), g) for g in groups]
    found = next(((v, g) for v, g in views if v["incident_id"] == incident_id), None)
    if found is None:
        raise NotFound(f"incident {incident_id!r} not found between {start} and {end}: its id comes from "
                       f"`obsctl incidents` over a window holding its start (--since)")
    view, group = found
    overlapping = [v for v, _ in views if v is not view and v["sessions"] >= 2
                   and v["first_seen"] <= view["last_seen"] and v["last_seen"] >= view["first_seen"]]
    overlapping.sort(key=lambda i: (SEVERITIES.index(i["severity"]), -i["failures"], i["first_seen"]))
    return {"since": start, "until": end, "incident": view,
            "failures": [{"timestamp": t, "session_id": sid, "agent_name": agent, "message": message}
                         for t, sid, agent, message in group.seen],
            "overlapping": overlapping[:5]}


def _group(rows: list[tuple], gap: timedelta) -> list[_Group]:
    """Rows (oldest first) into runs of the same key with no pause longer than `gap`."""
    open_runs: dict[tuple, _Group] = {}
    done: list[_Group] = []
    gap_ms = gap.total_seconds() * 1000
    # The same failure repeats its message: each distinct message is masked, fingerprinted and
    # classified once.
    patterns: dict[str | None, str] = {None: ""}
    keys: dict[tuple, str] = {}
    kinds: dict[tuple, str] = {}
    for session_id, agent_name, event_type, timestamp, model, tool_name, output_data, tool_call in rows:
        output = orjson.loads(output_data) if output_data is not None else None
        call = orjson.loads(tool_call) if tool_call is not None else None
        message = error_message(output, call) or (main_text(output) if output else None)
        pattern = patterns.get(message)
        if pattern is None:
            pattern = patterns[message] = normalise_message(message)
        fp_key = (event_type, tool_name, pattern)
        fp = keys.get(fp_key)
        if fp is None:
            fp = keys[fp_key] = fingerprint(event_type, tool_name, pattern)
        key = (fp, model)
        run = open_runs.get(key)
        if run is not None and (parse_ts(timestamp) - parse_ts(run.last_seen)).total_seconds() * 1000 > gap_ms:
            done.append(run)
            run = None
        if run is None:
            run = open_runs[key] = _Group(
                key=key, event_type=event_type, tool_name=tool_name, model=model, pattern=pattern,
                kind=_kind(kinds, event_type, message), example=excerpt(message, MESSAGE_CHARS) or event_type,
                first_seen=timestamp, last_seen=timestamp)
        run.failures += 1
        run.last_seen = timestamp
        if len(run.seen) < TIMELINE_CAP:
            run.seen.append((timestamp, session_id, agent_name, excerpt(message, MESSAGE_CHARS) or event_type))
        run.sessions[session_id] = None
        if agent_name is not None:
            run.agents[agent_name] = None
    return done + list(open_runs.values())


def _kind(cache: dict, event_type: str, message: str | None) -> str:
    kind = cache.get((event_type, message))
    if kind is None:
        kind = cache[(event_type, message)] = classify_error(event_type, message)
    return kind


def severity(sessions: int, agents: int) -> tuple[str, str]:
    """(SEV-1..SEV-3, why), by the rule in the module docstring."""
    if agents >= SEV1_AGENTS:
        return "SEV-1", f"{agents} agents affected, at least {SEV1_AGENTS}"
    if sessions >= SEV1_SESSIONS:
        return "SEV-1", f"{sessions} sessions affected, at least {SEV1_SESSIONS}"
    if agents >= SEV2_AGENTS:
        return "SEV-2", f"{agents} agents affected"
    if sessions >= SEV2_SESSIONS:
        return "SEV-2", f"{sessions} sessions affected, at least {SEV2_SESSIONS}"
    return "SEV-3", f"{sessions} sessions of one agent" if agents <= 1 else f"{sessions} sessions"


def _view(g: _Group) -> dict:
    sessions, agents = list(g.sessions), list(g.agents)
    sev, why = severity(len(sessions), len(agents))
    subject = g.tool_name or g.model or g.event_type
    who = (f"{plural(len(sessions), 'session')} of {agents[0]}" if len(agents) == 1
           else f"{plural(len(sessions), 'session')}, {plural(len(agents), 'agent')}")
    what = f"{subject}: {excerpt(g.example, 60)}" if g.example != subject else subject
    title = f"{what} - {plural(g.failures, 'failure')}, {who}, {_clock(g.first_seen, g.last_seen)}"
    digest = hashlib.sha1("\x1f".join((g.key[0], g.key[1] or "", g.first_seen)).encode()).hexdigest()[:12]
    return {
        "incident_id": f"inc-{digest}",
        "title": title,
        "severity": sev,
        "severity_reason": why,
        "kind": g.kind,
        "kind_title": KIND_TITLES[g.kind],
        "fingerprint": g.key[0],
        "event_type": g.event_type,
        "tool_name": g.tool_name,
        "model": g.model,
        "pattern": g.pattern,
        "example": g.example,
        "failures": g.failures,
        "sessions": len(sessions),
        "agents": len(agents),
        "first_seen": g.first_seen,
        "last_seen": g.last_seen,
        "duration_ms": round((parse_ts(g.last_seen) - parse_ts(g.first_seen)).total_seconds() * 1000),
        "session_ids": sessions[:NAMED],
        "agent_names": agents[:NAMED],
    }


def _clock(first: str, last: str) -> str:
    """`19:56-20:39` (UTC) within a day, else with the dates."""
    if first[:10] == last[:10]:
        return f"{first[11:16]}-{last[11:16]} UTC"
    return f"{first[:10]} {first[11:16]} - {last[:10]} {last[11:16]} UTC"
