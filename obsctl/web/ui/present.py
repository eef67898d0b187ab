"""Presentation helpers of the dashboard's templates: numbers and durations as text, JSON shown
pretty, a session's events in span-tree order and its timeline's geometry. Shaping only: the
data comes from the services."""

from __future__ import annotations

from typing import Any

import orjson

from obsctl.errors import InvalidInput
from obsctl.jsonutil import dumps
from obsctl.services.sessions.conversation import event_messages
from obsctl.services.sessions.fields import error_message, reasoning_text, tool_parts
from obsctl.timeutil import parse_ts

TIMELINE_WIDTH = 1000  # the SVG's viewBox width; the browser scales it


def fmt_num(value: Any, digits: int = 0) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and digits:
        return f"{value:,.{digits}f}"
    if isinstance(value, (int, float)):
        return f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:,.2f}"
    return str(value)


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 1000:
        return f"{value:.0f} ms"
    if value < 60_000:
        return f"{value / 1000:.2f} s"
    return f"{value / 60_000:.1f} min"


def pretty_json(value: Any) -> str:
    """JSON indented for a <pre> (Jinja escapes it on output)."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def compact_json(value: Any) -> str:
    """A value on one line: text as it is, anything else as compact JSON (null as nothing)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else dumps(value)


def _ms_between(start: str, end: str) -> float | None:
    try:
        return (parse_ts(end) - parse_ts(start)).total_seconds() * 1000
    except (InvalidInput, ValueError, TypeError):
        return None


def event_rows(events: list[dict], scale: dict | None = None) -> list[dict]:
    """The events in span-tree order: each after its parent (by parent_id), siblings in time
    order, with their depth; events whose parent is not in the session are roots. Each row
    carries its name (the span's name, else the tool or the event type), its bar of the
    waterfall (on the scale of `timeline(...)`, when given) and its conversation."""
    by_id = {e["event_id"]: e for e in events}
    children: dict[str | None, list[dict]] = {}
    for event in events:
        parent = event.get("parent_id")
        children.setdefault(parent if parent in by_id and parent != event["event_id"] else None,
                            []).append(event)
    rows: list[dict] = []
    seen: set[str] = set()
    stack = [(e, 0) for e in reversed(children.get(None, []))]
    while stack:
        event, depth = stack.pop()
        if event["event_id"] in seen:
            continue
        seen.add(event["event_id"])
        rows.append(_row(event, depth, len(rows) + 1, scale))
        stack.extend((c, depth + 1) for c in reversed(children.get(event["event_id"], [])))
    for event in events:  # cycles of parent_id: shown at the end, flat
        if event["event_id"] not in seen:
            rows.append(_row(event, 0, len(rows) + 1, scale))
    return rows


def _row(event: dict, depth: int, number: int, scale: dict | None) -> dict:
    tool, arguments, result = tool_parts(event.get("tool_call"))
    metadata = event.get("metadata")
    span_name = metadata.get("span_name") if isinstance(metadata, dict) else None
    return {
        "number": number,
        "depth": min(depth, 8),
        "event": event,
        "name": span_name if isinstance(span_name, str) and span_name else (tool or event["event_type"]),
        "tool": tool,
        "arguments": arguments,
        "result": result,
        "reasoning": reasoning_text(event.get("decision_trace")),
        "error": error_message(event.get("output_data"), event.get("tool_call")) if event["is_error"] else None,
        "messages": event_messages(event.get("input_data"), event.get("output_data")),
        "bar": _bar(event, scale) if scale is not None else None,
    }


def _bar(event: dict, scale: dict) -> dict:
    """The event's bar of the waterfall: x and width on the timeline's 0..TIMELINE_WIDTH scale."""
    offset = max(0.0, _ms_between(scale["started_at"], event["timestamp"]) or 0.0)
    duration = event.get("duration_ms") or 0.0
    span = scale["span_ms"]
    x = min(offset / span * TIMELINE_WIDTH, TIMELINE_WIDTH - 1.5)
    return {"x": round(x, 2), "width": round(max(duration / span * TIMELINE_WIDTH, 1.5), 2),
            "label": f"+{fmt_ms(offset)}" + (f", {fmt_ms(duration)}" if duration else "")}


def timeline(session: dict, events: list[dict]) -> dict:
    """Bars for an SVG timeline: each event from its timestamp for its duration, on a scale
    from the session's start to its last moment."""
    start = session["started_at"]
    offsets = []
    for event in events:
        offset = _ms_between(start, event["timestamp"])
        offsets.append(max(0.0, offset or 0.0))
    span = max([o + (e.get("duration_ms") or 0) for o, e in zip(offsets, events)] or [0.0])
    if session.get("ended_at"):
        span = max(span, _ms_between(start, session["ended_at"]) or 0.0)
    span = span or 1.0
    bars = []
    for index, (offset, event) in enumerate(zip(offsets, events)):
        duration = event.get("duration_ms") or 0.0
        bars.append({
            "y": index * 6,
            "x": round(offset / span * TIMELINE_WIDTH, 2),
            "width": round(max(duration / span * TIMELINE_WIDTH, 1.5), 2),
            "error": event["is_error"],
            "label": f"{event['event_type']} at +{fmt_ms(offset)}" + (f", {fmt_ms(duration)}" if duration else ""),
        })
    return {"bars": bars, "width": TIMELINE_WIDTH, "height": max(6, len(events) * 6), "span_ms": span,
            "started_at": start}


def sparkline_points(values: list[float | None], width: int = 120, height: int = 28) -> str:
    """SVG polyline points for a 0-100 series (gaps skipped)."""
    if not values:
        return ""
    step = width / max(1, len(values) - 1)
    points = [f"{i * step:.1f},{height - (v / 100) * height:.1f}" for i, v in enumerate(values) if v is not None]
    return " ".join(points)
