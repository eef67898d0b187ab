"""Event vocabulary shared by every service: the single error predicate and lifecycle types."""

from __future__ import annotations

from typing import Any

LIFECYCLE_TYPES = frozenset({"session_start", "session_end"})
ERROR_TYPES = frozenset({"error", "timeout", "rate_limit"})
SESSION_STATUSES = ("active", "completed", "error")


def is_error_event(event_type: str, output_data: Any, tool_call: Any) -> bool:
    """The one definition of an error event, used everywhere (stored as events.is_error).

    An event is an error when its type is error/timeout/rate_limit or ends with `_error`, or
    when output_data or tool_call carries a non-empty `error` key.
    """
    if event_type in ERROR_TYPES or event_type.endswith("_error"):
        return True
    if type(output_data) is dict and output_data.get("error"):
        return True
    return bool(type(tool_call) is dict and tool_call.get("error"))
