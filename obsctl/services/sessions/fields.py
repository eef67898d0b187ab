"""Reading meaning out of stored event fields, shared by explain, export and compare.

Events keep their JSON fields as text; these helpers turn them into the few values the
session views show (tool name/input/output, reasoning text, an error message, an excerpt)
so every view derives them the same way.
"""

from __future__ import annotations

from typing import Any, overload

from obsctl.jsonutil import dumps
from obsctl.timeutil import ms_between
from obsctl.vocabulary import tool_error, tool_field

# Keys that usually hold the human-readable part of an input or output object.
_TEXT_KEYS = ("prompt", "text", "content", "message", "query", "question", "input", "output",
              "result", "response", "answer", "completion")


def as_text(value: Any) -> str | None:
    """A value as one string: strings as they are, anything else as compact JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return dumps(value)


def tool_parts(tool_call: Any) -> tuple[str | None, str | None, str | None]:
    """(name, input, output) of a tool_call object, or of their `tool_*` aliases; input and
    output as text."""
    return (as_text(tool_field(tool_call, "name")), as_text(tool_field(tool_call, "input")),
            as_text(tool_field(tool_call, "output")))


def reasoning_text(decision_trace: Any) -> str | None:
    """The reasoning of a decision_trace: its `reasoning` value, else the whole trace as JSON."""
    if not isinstance(decision_trace, dict) or not decision_trace:
        return None
    reasoning = decision_trace.get("reasoning")
    if reasoning is not None:
        return as_text(reasoning)
    return as_text(decision_trace)


def error_message(output_data: Any, tool_call: Any) -> str | None:
    """The `error` value of output_data, tool_call or tool_call.tool_output (the error
    predicate's sources, in that order)."""
    if isinstance(output_data, dict) and output_data.get("error"):
        return as_text(output_data["error"])
    return as_text(tool_error(tool_call))


def main_text(data: Any) -> str | None:
    """The readable part of an input/output object: a well-known text key, else its JSON."""
    if data is None:
        return None
    if isinstance(data, dict):
        for key in _TEXT_KEYS:
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return as_text(data)


@overload
def excerpt(text: str, limit: int = 120) -> str: ...
@overload
def excerpt(text: None, limit: int = 120) -> None: ...
@overload
def excerpt(text: str | None, limit: int = 120) -> str | None: ...


def excerpt(text: str | None, limit: int = 120) -> str | None:
    """One line of at most `limit` characters (whitespace collapsed, `…` when cut)."""
    if text is None:
        return None
    line = " ".join(text.split())
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def session_duration_ms(session: dict) -> float | None:
    """Wall-clock duration: start to end, or to the last event while the session is active."""
    end = session.get("ended_at") or session.get("last_event_at")
    duration = ms_between(session.get("started_at"), end)
    if duration is None:
        return None
    # A session_end stamped before the first event would give a negative span.
    return max(0.0, round(duration, 3))
