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


def start_background(app):
    """Start the search indexer of a served app; returns it (it has `stop()`)."""
    from obsctl.services.search_index import SearchIndexer

    return SearchIndexer(app.extensions["obsctl"].settings).start()
