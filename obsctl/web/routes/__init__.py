"""The HTTP API's route modules, one per area: the registry `create_app` and the OpenAPI document read.

Each module exposes `blueprint` and `RATE_GROUP`, and documents its routes with
`OPENAPI_PATHS` and `OPENAPI_MODELS` (the declared models its bodies name) for the routes it
writes, and `READ_PATHS` and `READ_MODELS` for the reads its area declares (web/reads.py:
`serve_reads`); optionally `start_background(app)`.
"""

from __future__ import annotations

import importlib

ROUTE_MODULES = (
    "health",
    "ingest",
    "otlp",
    "sessions",
    "session_views",
    "search",
    "follow",
    "analytics",
    "alerts",
    "webhooks",
    "triage",
    "incidents",
    "changes",
    "postmortem",
    "sla",
    "scorecards",
    "maintenance",
    "configuration",
)


def route_modules():
    """The route modules, imported (each import is cached by Python after the first)."""
    return [importlib.import_module(f"{__name__}.{name}") for name in ROUTE_MODULES]
