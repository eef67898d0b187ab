"""Event vocabulary shared by every service: the single error predicate, the tool_call
field aliases and lifecycle types."""

from __future__ import annotations

from typing import Any

LIFECYCLE_TYPES = frozenset({"session_start", "session_end"})
ERROR_TYPES = frozenset({"error", "timeout", "rate_limit"})
SESSION_STATUSES = ("active", "completed", "error")

# tool_call keys: the spec's spelling and the alias some SDKs send instead. The spec's key
# wins when both are present (not null).
TOOL_ALIASES = {"name": "tool_name", "input": "tool_input", "output": "tool_output"}


def tool_field(tool_call: Any, key: str) -> Any:
    """`name`, `input` or `output` of a tool_call object, else its `tool_<key>` alias."""
    if type(tool_call) is not dict:
        return None
    value = tool_call.get(key)
    return tool_call.get(TOOL_ALIASES[key]) if value is None else value


def tool_error(tool_call: Any) -> Any:
    """The tool's error: a non-empty `error` of the tool_call, else of its `tool_output`."""
    if type(tool_call) is not dict:
        return None
    error = tool_call.get("error")
    if error:
        return error
    output = tool_call.get("tool_output")
    if type(output) is dict and output.get("error"):
        return output["error"]
    return None


def is_error_event(event_type: str, output_data: Any, tool_call: Any) -> bool:
    """The one definition of an error event, used everywhere (stored as events.is_error).

    An event is an error when its type is error/timeout/rate_limit or ends with `_error`, or
    when output_data, tool_call or tool_call.tool_output carries a non-empty `error` key.
    """
    if event_type in ERROR_TYPES or event_type.endswith("_error"):
        return True
    if type(output_data) is dict and output_data.get("error"):
        return True
    return tool_call is not None and bool(tool_error(tool_call))
