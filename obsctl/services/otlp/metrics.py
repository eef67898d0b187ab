"""OTLP metrics: accepted and dropped.

SDKs such as Traceloop's export metrics (token-usage histograms, durations) to `/v1/metrics`
next to their traces. obsctl computes its own figures from the stored events, so it keeps no
metrics; answering the export with success (rather than 404) keeps those exporters from
logging a failure on every interval. The body is still read as what it claims to be, so a
client sending something else learns it from a 400.
"""

from __future__ import annotations

import orjson

from obsctl.errors import InvalidInput
from obsctl.services.otlp import wire


def accept_metrics(body: bytes, fmt: str) -> int:
    """Check an `ExportMetricsServiceRequest` (protobuf or OTLP JSON); the number of metrics
    it carried, none of which is kept."""
    if fmt == wire.PROTOBUF:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
        )

        try:
            request = ExportMetricsServiceRequest.FromString(body)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise InvalidInput(f"cannot decode the protobuf body as an ExportMetricsServiceRequest: "
                               f"{str(exc)[:200]}") from None
        return sum(len(scope.metrics) for resource in request.resource_metrics
                   for scope in resource.scope_metrics)
    try:
        document = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"the body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise InvalidInput("an OTLP JSON metrics export must be an object with resourceMetrics")
    return wire.count_json_items(document, "resourceMetrics", "scopeMetrics", "metrics")


def encode_metrics_response(fmt: str) -> bytes:
    """An empty `ExportMetricsServiceResponse`: full success (nothing is reported rejected, so
    exporters stay quiet)."""
    return b"" if fmt == wire.PROTOBUF else b"{}"
