"""The HTTP API's route modules, one per area: the registry `create_app` and the OpenAPI document read.

Each module exposes `blueprint`, `RATE_GROUP` and `OPENAPI_PATHS` (and optionally
`OPENAPI_MODELS`, the declared models its bodies name, and `start_background(app)`).
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
