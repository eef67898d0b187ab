"""Vocabulary shared by the services, the declared models and the CLI: the single error
predicate, the tool_call field aliases and lifecycle types, the rate definitions, the metrics of
alert rules and SLA targets, and the spellings of their comparison operators.

Nothing here imports a service, so models (obsctl/models) can state the same names and enums.
"""

from __future__ import annotations

from typing import Any

LIFECYCLE_TYPES = frozenset({"session_start", "session_end"})
ERROR_TYPES = frozenset({"error", "timeout", "rate_limit"})
SESSION_STATUSES = ("active", "completed", "error")

# One sentence per rate name (services/rates.py), for the field descriptions of the API document.
RATE_DEFINITIONS = {
    "event_count": "Every stored event of the session, session_start and session_end included "
                   "(as in `sessions list`)",
    "error_count": "The error events among event_count",
    "body_events": "Events other than session_start and session_end",
    "error_events": "The body events that are errors",
    "error_event_rate": "Percent (0-100, two decimals) of the body events that are errors: "
                        "error_events / body_events",
    "sessions": "Sessions counted",
    "error_sessions": "Sessions whose status is error",
    "error_session_rate": "Percent (0-100, two decimals) of the sessions whose status is error: "
                          "error_sessions / sessions",
}

# The seven agent metrics of alert rules and SLA targets (services/metrics.py computes them):
# name -> one-line description (also the body of `GET /alerts/metrics`).
METRICS: dict[str, str] = {
    "avg_duration_ms": "Mean duration_ms of the window's events that have one",
    "p95_duration_ms": "95th percentile (nearest rank) of the same durations",
    "error_rate": "Percent of the window's events that are errors (0-100): its error_event_rate",
    "tool_error_rate": "Percent of tool events (a tool_call, or type tool_call/tool_error) that are errors",
    "avg_tokens": "Mean tokens (in + out) per session, over the sessions with events in the window",
    "avg_cost": "Mean USD cost per session, same sessions (unpriced events add nothing; null if none priced)",
    "session_count": "Sessions whose started_at is in the window (0 when none)",
}

# The score metric: `avg_score:NAME`, the mean of the scores named NAME given in the window
# (services/sessions/housekeeping.py records scores). NAME is spelt as a tag key.
SCORE_METRIC_PREFIX = "avg_score:"
SCORE_METRIC = ("avg_score:NAME", "Mean value of the scores named NAME given in the window "
                "(POST /sessions/:id/scores; null if none)")
SCORE_METRIC_PATTERN = r"^avg_score:[A-Za-z0-9_.-]{1,64}$"

# Comparison operators (services/operators.py): the symbols are canonical; the words are
# accepted too because `<` and `>` are shell redirections.
OPERATORS = ("<", ">", "<=", ">=", "==", "!=")
OPERATOR_WORDS = {"lt": "<", "gt": ">", "le": "<=", "lte": "<=", "ge": ">=", "gte": ">=",
                  "eq": "==", "ne": "!="}


def operator_words(allowed: tuple[str, ...]) -> list[str]:
    """The word spellings of the `allowed` symbols, in OPERATOR_WORDS order."""
    return [word for word, symbol in OPERATOR_WORDS.items() if symbol in allowed]


def operator_spellings(allowed: tuple[str, ...] = OPERATORS) -> list[str]:
    """Every accepted spelling of the `allowed` operators (for the OpenAPI enum)."""
    return [*allowed, *operator_words(allowed)]


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


def child_error(output_data: Any) -> str | None:
    """The message of a span that failed only because a child failed (OTLP ingest moves it to
    `output_data.child_error`: the failure counts once, on the deepest span), else None."""
    if type(output_data) is dict and output_data.get("child_error"):
        return str(output_data["child_error"])
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


# Letter grades of DECISIONS.md (triage reports and scorecards): the lowest score of each
# grade, best first; below the last band the grade is F.
GRADE_BANDS = ((95, "A+"), (90, "A"), (85, "B+"), (80, "B"), (70, "B-"), (65, "C+"), (60, "C"),
               (50, "D"))
GRADES = (*(grade for _, grade in GRADE_BANDS), "F")


# The columns of a bulk export's line (and of a followed event), in order: the store reads
# events in this order and services/sessions/bulk_export.py turns the rows into lines.
EVENT_LINE_COLUMNS = (
    "event_id", "session_id", "event_type", "timestamp", "model", "agent_name", "tokens_in",
    "tokens_out", "tokens_cache_read", "tokens_cache_write", "tokens_reasoning", "duration_ms",
    "input_data", "output_data", "tool_call", "decision_trace", "metadata", "parent_id",
)
