"""The postmortem of an incident (services/incidents.py): one failure across sessions, as one
report. Built from the incident's failures, its sessions' rows, the changes of its agents'
configurations just before it (services/changes.py) and the incidents that overlapped it.

- impact: each session the failure hit (first 20): its agent, status, how many of its errors
  were this failure, when it first hit, and whether the session failed;
- timeline: every failure (first 200) in time order, with its session and message;
- root cause: the failure's kind (triage's error kinds) and what to do about it; a change of an
  affected agent's model or release in the 24 hours before the first failure is named as a
  possible cause;
- overlapping: other incidents (2+ sessions) whose time overlaps, which often share the cause.
"""

from __future__ import annotations

from datetime import timedelta

from obsctl.services.error_kinds import KIND_SUGGESTIONS
from obsctl.services.incidents import find_incident
from obsctl.services.sessions.explain import md_escape
from obsctl.store import Store
from obsctl.text import plural
from obsctl.timeutil import format_ts, now_iso, parse_ts

CHANGE_LOOKBACK = timedelta(hours=24)


def postmortem_incident(store: Store, incident_id: str, *, pricer, since: str | None = None,
                        until: str | None = None, gap_minutes: int | None = None) -> dict:
    """The postmortem of one incident of [since, until) (default the last 7 days); NotFound
    when the window holds no incident with that id."""
    from obsctl.services.changes import find_changes

    found = find_incident(store, incident_id, since=since, until=until, gap_minutes=gap_minutes)
    incident = found["incident"]
    failures = found["failures"]
    per_session: dict[str, dict] = {}
    for f in failures:
        entry = per_session.setdefault(f["session_id"], {"failures": 0, "first_failure": f["timestamp"]})
        entry["failures"] += 1
    impact = []
    for session_id in incident["session_ids"]:
        row = store.sessions.get_session(session_id) or {}
        entry = per_session.get(session_id, {"failures": 0, "first_failure": None})
        impact.append({"session_id": session_id, "agent_name": row.get("agent_name"),
                       "status": row.get("status"), "failures": entry["failures"],
                       "first_failure": entry["first_failure"], "error_count": row.get("error_count"),
                       "failed": row.get("status") == "error"})
    first = parse_ts(incident["first_seen"])
    changes = []
    for agent in incident["agent_names"]:
        for change in find_changes(store, pricer, agent=agent, since=format_ts(first - CHANGE_LOOKBACK),
                                   until=incident["first_seen"]):
            changes.append({k: change[k] for k in ("change_id", "agent_name", "changed_at", "title", "status",
                                                   "acknowledged")})
    failed_sessions = sum(1 for i in impact if i["failed"])
    report = {
        "incident_id": incident_id,
        "generated_at": now_iso(),
        "title": incident["title"],
        "severity": incident["severity"],
        "severity_reason": incident["severity_reason"],
        "incident": incident,
        "summary": _summary(incident, failed_sessions, impact, changes),
        "impact": impact,
        "timeline": failures,
        "root_cause": {
            "kind": incident["kind"], "kind_title": incident["kind_title"],
            "where": incident["tool_name"] or incident["model"] or incident["event_type"],
            "pattern": incident["pattern"], "example": incident["example"],
            "preceding_changes": changes,
        },
        "overlapping": found["overlapping"],
        "recommendations": _recommendations(incident, changes),
    }
    report["markdown"] = render_markdown(report)
    return report


def _summary(incident: dict, failed: int, impact: list[dict], changes: list[dict]) -> str:
    where = incident["tool_name"] or incident["model"] or incident["event_type"]
    lasted = _lasted(incident["duration_ms"])
    parts = [f"{incident['kind_title']} in {where}: {plural(incident['failures'], 'failure')} in "
             f"{plural(incident['sessions'], 'session')} of {plural(incident['agents'], 'agent')} from "
             f"{incident['first_seen']} to {incident['last_seen']} ({lasted})."]
    active = sum(1 for i in impact if i["status"] == "active")
    shown = f"its {plural(len(impact), 'session')}" if len(impact) == incident["sessions"] else \
        f"the first {plural(len(impact), 'session')}"
    parts.append(f"Of {shown}, {failed} ended in failure" + (f", {active} {'is' if active == 1 else 'are'} still active"
                                                            if active else "") + ".")
    regressions = [c for c in changes if c["status"] == "regression"]
    if regressions:
        c = regressions[0]
        parts.append(f"{c['agent_name']} changed configuration at {c['changed_at']} ({c['title']}), "
                     f"in the 24 hours before the first failure.")
    return " ".join(parts)


def _lasted(ms: int) -> str:
    """`43 min`, `2 h 5 min`, `12 s`, `an instant`."""
    seconds = round(ms / 1000)
    if seconds <= 0:
        return "an instant"
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def _recommendations(incident: dict, changes: list[dict]) -> list[dict]:
    where = incident["tool_name"] or incident["model"] or incident["event_type"]
    recs = [{"priority": "high", "action": f"For {where}: {KIND_SUGGESTIONS[incident['kind']]}"}]
    if incident["agents"] > 1:
        recs.append({"priority": "high", "action": (
            f"{where} failed for {plural(incident['agents'], 'agent')} at once: check its status or "
            f"its provider before the agents, and alert on it directly (obsctl alerts rules add "
            f"--metric tool_error_rate).")})
    for c in changes:
        if c["status"] == "regression" and not c["acknowledged"]:
            recs.append({"priority": "medium", "action": (
                f"Check whether the change of {c['agent_name']} at {c['changed_at']} ({c['title']}) "
                f"caused it; if not, acknowledge it (obsctl changes ack {c['change_id']}).")})
    return recs


def render_markdown(r: dict) -> str:
    i = r["incident"]
    lines = [
        f"# Incident postmortem: {md_escape(r['title'])}",
        "",
        f"- **Severity:** {r['severity']}: {md_escape(r['severity_reason'])}",
        f"- **Incident:** {r['incident_id']} ({i['kind_title']}, fingerprint {i['fingerprint']})",
        f"- **From:** {i['first_seen']}",
        f"- **To:** {i['last_seen']}",
        f"- **Impact:** {plural(i['failures'], 'failure')}, {plural(i['sessions'], 'session')}, "
        f"{plural(i['agents'], 'agent')}",
        "",
        "## Summary",
        "",
        md_escape(r["summary"]),
        "",
        "## Sessions affected",
        "",
        "| Session | Agent | Status | Failures | First failure |",
        "|---|---|---|---|---|",
    ]
    for s in r["impact"]:
        lines.append(f"| {md_escape(s['session_id'])} | {md_escape(s['agent_name'] or '-')} | {s['status'] or '-'} "
                     f"| {s['failures']} | {s['first_failure'] or '-'} |")
    if i["sessions"] > len(r["impact"]):
        lines += ["", f"... and {i['sessions'] - len(r['impact'])} more."]
    lines += ["", "## Timeline", "", "| Time | Session | Agent | Message |", "|---|---|---|---|"]
    for f in r["timeline"]:
        lines.append(f"| {f['timestamp']} | {md_escape(f['session_id'])} | {md_escape(f['agent_name'] or '-')} "
                     f"| {md_escape(f['message'])} |")
    cause = r["root_cause"]
    lines += ["", "## Root cause", "",
              f"{cause['kind_title']} in {md_escape(cause['where'])}. Message pattern: "
              f"`{md_escape(cause['pattern'] or '-')}`."]
    for c in cause["preceding_changes"]:
        lines.append(f"\n- Preceding change: {md_escape(c['agent_name'])} at {c['changed_at']}: "
                     f"{md_escape(c['title'])} ({c['status']}"
                     f"{', acknowledged' if c['acknowledged'] else ''})")
    if r["overlapping"]:
        lines += ["", "## Overlapping incidents", ""]
        lines += [f"- {o['severity']} {md_escape(o['title'])} ({o['incident_id']})" for o in r["overlapping"]]
    lines += ["", "## Recommendations", ""]
    lines += [f"{n}. **{rec['priority']}**: {md_escape(rec['action'])}" for n, rec in enumerate(r["recommendations"], 1)]
    return "\n".join(lines) + "\n"
