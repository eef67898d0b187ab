"""`GET /search`: full-text search over what events said (services/search.py), declared in
models/search.py."""

from __future__ import annotations

from flask import Blueprint

import obsctl.models.search as models
from obsctl.models.search import SearchResult
from obsctl.web.reads import serve_reads

blueprint = Blueprint("search", __name__)
RATE_GROUP = "sessions"  # it reads what sessions said: their per-IP limit

READ_PATHS, READ_MODELS = serve_reads(blueprint, models)
OPENAPI_MODELS = (SearchResult,)
