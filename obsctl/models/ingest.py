"""The validated event as it travels from the ingest service to the store."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from msgspec import UNSET, Meta, Struct, UnsetType


class EventRow(NamedTuple):
    """One validated, normalised event: the columns of the `events` table, in their order.

    A named tuple, so the store hands it to `executemany` as it is while every other reader
    uses the field names. Objects are JSON text; `is_error` is 0 or 1 (vocabulary.is_error_event).
    """

    event_id: str
    session_id: str
    event_type: str
    timestamp: str
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    duration_ms: int | float | None
    input_data: str | None
    output_data: str | None
    tool_call: str | None
    decision_trace: str | None
    metadata: str | None
    agent_name: str | None
    tool_name: str | None
    is_error: int
    parent_id: str | None
    tokens_cache_read: int | None
    tokens_cache_write: int | None
    tokens_reasoning: int | None
    tool_key: int | None  # what makes two tool calls identical (services/call_keys.call_key)


# --- The body of `POST /events` and its answer --------------------------------------------------
# Validation itself is services/ingest/validation.validate_event (every problem of every event, with
# messages); these declarations state the same limits for the OpenAPI document.

MAX_ID_LEN = 128
MAX_TEXT_LEN = 256
# Token counts beyond this are certainly wrong and would overflow SQLite's 64-bit sums.
MAX_TOKENS = 2**40
# About 31,700 years: anything longer is a unit mistake, and it keeps the sums finite.
MAX_DURATION_MS = 1e15
# The shape of every timestamp datetime.fromisoformat() reads: a date (2026-11-21, 20261121,
# 2026-W47, 2026-W47-6, 2026W476), optionally any one separator and a time starting with the
# hour's two digits. Values of this shape can still be impossible dates (2026-13-45): 400.
ISO_8601 = ("^[0-9]{4}(-[0-9]{2}-[0-9]{2}|[0-9]{4}|-?W[0-9]{2}(-?[0-9])?)"
            "([\\s\\S][0-9]{2}[\\s\\S]*)?$")

_Id = Annotated[str, Meta(min_length=1, max_length=MAX_ID_LEN)]
_Text = Annotated[str, Meta(max_length=MAX_TEXT_LEN)]
_Count = Annotated[int, Meta(ge=0, le=MAX_TOKENS)]
_Object = dict[str, Any]


class EventInput(Struct, omit_defaults=True):
    """An agent event; every field is optional except as noted for session_start, but an event
    has at least one of these fields. A field set to null is the same as a field left out. Other
    fields are ignored and counted in the response's warnings"""

    __json_schema_extra__: ClassVar[dict] = {"minProperties": 1}

    event_type: Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_LEN)] | None = "generic"
    session_id: _Id | None = "unknown"
    event_id: _Id | None = None
    timestamp: Annotated[str, Meta(
        pattern=ISO_8601,
        description="ISO 8601, e.g. 2026-11-21T20:42:19.123Z (no offset: UTC); default now; at "
                    "most OBSCTL_MAX_FUTURE_SKEW (default 1 day) ahead of the server clock")] | None = None
    model: _Text | None = None
    agent_name: _Text | None = None
    tokens_in: _Count | None = None
    tokens_out: _Count | None = None
    tokens_cache_read: Annotated[_Count | None, Meta(
        description="The part of tokens_in read from the provider's prompt cache (tokens_in counts "
                    "every input token, cached ones included)")] = None
    tokens_cache_write: Annotated[_Count | None, Meta(
        description="The part of tokens_in written to the provider's prompt cache")] = None
    tokens_reasoning: Annotated[_Count | None, Meta(
        description="The part of tokens_out spent on reasoning")] = None
    duration_ms: Annotated[float, Meta(ge=0, le=MAX_DURATION_MS)] | None = None
    input_data: _Object | None = None
    output_data: _Object | None = None
    tool_call: _Object | None = None
    decision_trace: _Object | None = None
    metadata: _Object | None = None
    status: Annotated[str | None, Meta(description="session_end: completed or error")] = None
    total_tokens_in: _Count | None = None
    total_tokens_out: _Count | None = None
    parent_id: Annotated[str | None, Meta(description="event_id of the parent event")] = None
    tags: Annotated[dict[str, str] | None, Meta(
        description="session_start: the session's tags, key -> value (keys of letters, digits, "
                    "_ . -, at most 64 characters; values 1-256 characters; at most 50 tags)")] = None


class EventBatch(Struct, forbid_unknown_fields=True):
    """The body of `POST /events`: the events key and nothing else"""

    events: list[EventInput]


class IngestWarning(Struct):
    """Something to say about a stored batch"""

    code: Literal["unknown_fields"]
    message: Annotated[str, Meta(examples=["3 events had unknown fields: evnt_type (3)"])]
    events: Annotated[int, Meta(ge=1)] | UnsetType = UNSET
    fields: Annotated[dict[str, int], Meta(
        description="events per unknown field name, the most frequent first (at most 10)")] | UnsetType = UNSET


class IngestResponse(Struct):
    """The answer to `POST /events`"""

    status: Literal["ok"]
    processed: Annotated[int, Meta(ge=0)]
    duplicates: Annotated[int, Meta(ge=0)]
    warnings: Annotated[list[IngestWarning], Meta(
        description="Present when there is something to say: events with fields that are not "
                    "event fields (stored without them)")] | UnsetType = UNSET
