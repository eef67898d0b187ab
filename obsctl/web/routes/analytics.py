"""`GET /analytics`: aggregate analytics across all sessions (spec 2.5), declared in
models/analytics.py."""

from flask import Blueprint

import obsctl.models.analytics as models
from obsctl.web.reads import serve_reads

blueprint = Blueprint("analytics", __name__)
RATE_GROUP = "analytics"

READ_PATHS, READ_MODELS = serve_reads(blueprint, models)
