"""The postmortem as one Markdown document (the report's `markdown` field).

Built from the report dict only, so the Markdown and the JSON can never disagree. User text
(messages, tool inputs, names) is escaped so it renders literally.
"""

from __future__ import annotations

import obsctl.services.postmortem.timeline as timeline
from obsctl.services.rates import format_percent
from obsctl.services.sessions.explain import format_elapsed, md_escape
from obsctl.text import MISSING


def _num(value: float | None, unit: str = "") -> str:
    if value is None:
        return MISSING
    text = f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"
    return text + unit


def _usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _header(r: dict) -> list[str]:
    events, body, errors = r["event_count"], r["body_events"], r["error_events"]
    return [
        f"# Postmortem: {md_escape(r['title'])}",
        "",
        f"- **Severity:** {r['severity']}: {md_escape(r['severity_reason'])}",
        f"- **Session:** {md_escape(r['session_id'])} (agent {md_escape(r['agent_name'])})",
        f"- **Status:** {r['status']}",
        f"- **Started:** {r['started_at']}",
        f"- **Ended:** {r['ended_at'] or 'not ended (active)'}",
        f"- **Duration:** {_num(r['duration_ms'], ' ms')}",
        (f"- **Events:** {events:,} ({body:,} without session start/end); {errors:,} of {body:,} "
         f"failed ({format_percent(r['error_event_rate'])})"),
        f"- **Cost:** {_usd(r['cost_breakdown']['total_usd'])}",
        "",
        "## Summary",
        "",
        md_escape(r["summary"]),
    ]


def _timeline(r: dict) -> list[str]:
    rows = []
    previous = 0
    for e in r["timeline"]:
        if e["number"] > previous + 1:  # a long session's timeline leaves events out
            rows.append(["...", "", "", f"{_num(e['number'] - previous - 1)} events left out", "", ""])
        previous = e["number"]
        marks = " ".join(m for m, on in (("**ERROR**", e["is_error"]), ("slow", e["slow"])) if on)
        rows.append([str(e["number"]), format_elapsed(e["elapsed_ms"]), md_escape(e["event_type"]),
                     md_escape(e["description"]), _num(e["duration_ms"], " ms"), marks])
    lines = ["## Timeline", ""]
    if r["timeline_left_out"]:
        lines += [f"Of its {_num(r['event_count'])} events this timeline shows the first and last "
                  f"{_num(timeline.TIMELINE_ENDS)} and the first {_num(timeline.TIMELINE_ERRORS)} errors between them; "
                  f"{_num(r['timeline_left_out'])} are left out (the export has every event).", ""]
    return lines + _table(["#", "Elapsed", "Event", "Description", "Duration", "Flags"], rows)


def _cascades(r: dict) -> list[str]:
    lines = ["## Error cascade", ""]
    cascades = r["error_cascade"]["cascades"]
    if not cascades:
        return lines + ["No errors."]
    for c in cascades:
        outcome = "recovered" if c["recovered"] else "not recovered"
        lines.append(f"{c['cascade']}. **{md_escape(c['path'])}**: {c['length']} error(s) over "
                     f"{_num(c['span_ms'], ' ms')}, {outcome}")
        for e in c["errors"]:
            relation = "" if e["relation"] is None else f" ({e['relation'].replace('_', ' ')})"
            where = f" in {md_escape(e['tool_name'])}" if e["tool_name"] else ""
            lines.append(f"   - {format_elapsed(e['elapsed_ms'])} {md_escape(e['event_type'])}{where}"
                         f"{relation}: {md_escape(e['message'] or MISSING)}")
    return lines


def _cost(r: dict) -> list[str]:
    cost = r["cost_breakdown"]
    lines = ["## Cost breakdown", "", f"Total: {_usd(cost['total_usd'])}", ""]
    lines += _table(["Model", "Calls", "Tokens in", "Tokens out", "Cost"], [
        [md_escape(m["model"] or "(no model)"), _num(m["calls"]), _num(m["tokens_in"]),
         _num(m["tokens_out"]), _usd(m["cost_usd"])] for m in cost["by_model"]])
    lines += [""] + _table(["Event type", "Events", "Tokens in", "Tokens out", "Cost"], [
        [md_escape(t["event_type"]), _num(t["events"]), _num(t["tokens_in"]), _num(t["tokens_out"]),
         _usd(t["cost_usd"])] for t in cost["by_event_type"]])
    failed = cost["failed_steps"]
    lines += ["", (f"Failed steps: {failed['events']} event(s), {_num(failed['total_tokens'])} tokens "
                   f"({failed['token_share_pct']}% of all tokens), {_usd(failed['cost_usd'])}.")]
    if cost["unpriced_models"] or cost["unpriced_tokens"]:
        names = ", ".join(md_escape(m) for m in cost["unpriced_models"]) or "events without a model"
        lines.append(f"Unpriced: {names} ({_num(cost['unpriced_tokens'])} tokens).")
    return lines


def _tools(r: dict) -> list[str]:
    lines = ["## Tool performance", ""]
    if not r["tool_performance"]:
        return lines + ["No tool calls."]
    rows = []
    for t in r["tool_performance"]:
        modes = "; ".join(f"{m['kind']} x{m['count']}: {md_escape(m['example'][:80])}"
                          for m in t["failure_modes"]) or MISSING
        rows.append([md_escape(t["tool_name"]), _num(t["calls"]), _num(t["failures"]),
                     f"{t['success_rate']}%", _num(t["p50_ms"], " ms"), _num(t["p95_ms"], " ms"), modes])
    return lines + _table(["Tool", "Calls", "Failures", "Success", "p50", "p95", "Failure modes"], rows)


def _factors(r: dict) -> list[str]:
    lines = ["## Contributing factors", ""]
    if not r["contributing_factors"]:
        return lines + ["None found."]
    for number, f in enumerate(r["contributing_factors"], start=1):
        lines.append(f"{number}. **{md_escape(f['title'])}** (likelihood {f['likelihood']:.2f})")
        lines += [f"   - {md_escape(item)}" for item in f["evidence"]]
    return lines


def _recommendations(r: dict) -> list[str]:
    lines = ["## Recommendations", ""]
    if not r["recommendations"]:
        return lines + ["Nothing to change."]
    return lines + [f"{n}. **{rec['priority']}**: {md_escape(rec['action'])}"
                    for n, rec in enumerate(r["recommendations"], start=1)]


def render_markdown(report: dict) -> str:
    """The whole postmortem report as Markdown."""
    sections = [_header(report), _timeline(report), _cascades(report), _cost(report),
                _tools(report), _factors(report), _recommendations(report)]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"
