"""`POST /sessions/compare`: its request and its answer, as declared models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from obsctl.models.common import JsonObject, Timestamp
from obsctl.models.sessions import SessionStatus


class ModelUsage(Struct):
    calls: int
    tokens_in: int
    tokens_out: int
    duration_ms: Annotated[float, Meta(description="Sum of this model's calls' duration_ms")]
    avg_duration_ms: Annotated[float | None, Meta(
        description="Mean over this model's calls that have a duration; null if none")]


class ToolUsage(Struct):
    calls: int
    total_duration: float


class SessionSummary(Struct):
    session_id: str
    agent_name: str
    status: SessionStatus
    tokens_in: int
    tokens_out: int
    total_tokens: int
    tokens_cache_read: Annotated[int, Meta(description="The part of tokens_in read from prompt caches")]
    tokens_cache_write: Annotated[int, Meta(description="The part of tokens_in written to prompt caches")]
    tokens_reasoning: Annotated[int, Meta(description="The part of tokens_out spent on reasoning")]
    event_count: int
    error_count: int
    cost_usd: Annotated[float | None, Meta(
        description="USD, the sum of the priced calls' costs; null when no call was priced")]
    unpriced_calls: Annotated[int, Meta(description="Calls that used tokens of a model without a known price")]
    total_processing_ms: Annotated[float, Meta(description="Sum of the events' duration_ms")]
    avg_event_duration_ms: Annotated[float, Meta(
        description="Mean over events that have a duration; 0 if none")]
    session_duration_ms: Annotated[float | None, Meta(
        description="started_at to ended_at (to the last event while active)")]
    models: dict[str, ModelUsage]
    event_types: dict[str, int]
    tools: dict[str, ToolUsage]
    metadata: JsonObject | None


class Delta(Struct):
    absolute: Annotated[float | None, Meta(description="B minus A; null when either is unknown")]
    percent: Annotated[float | None, Meta(
        description="(B - A) / A x 100, 2 decimals; null when A is 0 or either is unknown")]


class ModelLatency(Struct):
    a_avg_ms: Annotated[float | None, Meta(description="Mean call duration in A; null if A did not call it")]
    b_avg_ms: Annotated[float | None, Meta(description="Mean call duration in B; null if B did not call it")]
    absolute: Annotated[float | None, Meta(description="B minus A; null unless both called it")]
    percent: Annotated[float | None, Meta(description="(B - A) / A x 100, 2 decimals")]


class SessionDeltas(Struct):
    total_tokens: Delta
    tokens_in: Delta
    tokens_out: Delta
    tokens_cache_read: Delta
    tokens_cache_write: Delta
    tokens_reasoning: Delta
    event_count: Delta
    error_count: Delta
    total_processing_ms: Delta
    avg_event_duration_ms: Delta
    session_duration_ms: Annotated[Delta, Meta(description="Wall clock: started_at to ended_at")]
    cost_usd: Annotated[Delta, Meta(description="USD; both null when either session has no priced call")]


class SharedValues(Struct):
    event_types: list[str]
    tools: list[str]
    models: list[str]


class SessionComparison(Struct):
    compared_at: Timestamp
    session_a: SessionSummary
    session_b: SessionSummary
    deltas: SessionDeltas
    model_latency: Annotated[dict[str, ModelLatency], Meta(
        description="Per model either session called, sorted by name")]
    shared: SharedValues


class CompareRequest(Struct):
    """The body of `POST /sessions/compare`: the baseline session_a and session_b"""

    session_a: Annotated[str, Meta(min_length=1)]
    session_b: Annotated[str, Meta(min_length=1)]
