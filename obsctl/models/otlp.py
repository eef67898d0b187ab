"""`POST /v1/traces` (OTLP/HTTP) in its JSON encoding, as declared models.

Only what obsctl reads is declared; unknown fields are ignored (no additionalProperties), as
the OTLP JSON encoding requires. Decoding itself is services/otlp (json_format.py).
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType

from obsctl.models.common import JsonObject

_Span = Annotated[JsonObject, Meta(
    description="An OTLP span; a span that cannot be used is counted in partialSuccess.rejectedSpans")]


class OtlpKeyValue(Struct):
    key: str
    value: Annotated[Any, Meta(description="AnyValue")] | UnsetType = UNSET


class OtlpResource(Struct, kw_only=True):
    attributes: list[OtlpKeyValue] | None | UnsetType = UNSET


class OtlpScopeSpans(Struct, rename="camel", kw_only=True):
    scope: JsonObject | None | UnsetType = UNSET
    spans: list[_Span] | None | UnsetType = UNSET


class OtlpResourceSpans(Struct, rename="camel", kw_only=True):
    resource: OtlpResource | None | UnsetType = UNSET
    scope_spans: list[OtlpScopeSpans] | None | UnsetType = UNSET


class OtlpExportRequest(Struct, rename="camel", kw_only=True):
    """ExportTraceServiceRequest in the OTLP JSON encoding: hex trace and span ids, integer
    enums, 64-bit integers as strings or numbers; unknown fields ignored"""

    resource_spans: list[OtlpResourceSpans] | None | UnsetType = UNSET


class OtlpPartialSuccess(Struct, rename="camel"):
    rejected_spans: Annotated[str, Meta(description="int64 as a string")]
    error_message: str


class OtlpRejectedSpan(Struct):
    span: Annotated[str, Meta(description="trace id:span id, or where in the request the span is")]
    error: str


class OtlpSummary(Struct):
    """obsctl's own account of the request (only with ?summary=true)"""

    spans: Annotated[int, Meta(ge=0, description="Spans in the request")]
    stored: Annotated[int, Meta(ge=0, description="Stored as new events")]
    duplicates: Annotated[int, Meta(ge=0, description="Already stored (same trace and span id)")]
    sessions: Annotated[list[str], Meta(description="The sessions the usable spans belong to")]
    rejected: list[OtlpRejectedSpan]


class OtlpExportResponse(Struct, rename="camel", kw_only=True):
    """ExportTraceServiceResponse; partialSuccess only when spans were rejected"""

    partial_success: OtlpPartialSuccess | UnsetType = UNSET
    obsctl: OtlpSummary | UnsetType = UNSET
