"""`GET /incidents`: the same failure across sessions, grouped (services/incidents.py), declared
in models/incidents.py."""

from __future__ import annotations

from flask import Blueprint

import obsctl.models.incidents as models
from obsctl.web.reads import serve_reads

blueprint = Blueprint("incidents", __name__)
RATE_GROUP = "incidents"

READ_PATHS, READ_MODELS = serve_reads(blueprint, models)
