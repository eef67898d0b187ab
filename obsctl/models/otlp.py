"""`POST /v1/traces` and `POST /v1/logs` (OTLP/HTTP) in their JSON encoding, as declared models.

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


_LogRecord = Annotated[JsonObject, Meta(
    description="An OTLP log record; GenAI events (eventName or the event.name attribute gen_ai.*) "
                "are used, others ignored; a record that cannot be used is counted in "
                "partialSuccess.rejectedLogRecords")]


class OtlpScopeLogs(Struct, rename="camel", kw_only=True):
    scope: JsonObject | None | UnsetType = UNSET
    log_records: list[_LogRecord] | None | UnsetType = UNSET


class OtlpResourceLogs(Struct, rename="camel", kw_only=True):
    resource: OtlpResource | None | UnsetType = UNSET
    scope_logs: list[OtlpScopeLogs] | None | UnsetType = UNSET


class OtlpLogsExportRequest(Struct, rename="camel", kw_only=True):
    """ExportLogsServiceRequest in the OTLP JSON encoding: hex trace and span ids, 64-bit
    integers as strings or numbers; unknown fields ignored"""

    resource_logs: list[OtlpResourceLogs] | None | UnsetType = UNSET


class OtlpLogsPartialSuccess(Struct, rename="camel"):
    rejected_log_records: Annotated[str, Meta(description="int64 as a string")]
    error_message: str


class OtlpLogsExportResponse(Struct, rename="camel", kw_only=True):
    """ExportLogsServiceResponse; partialSuccess only when log records were rejected"""

    partial_success: OtlpLogsPartialSuccess | UnsetType = UNSET
