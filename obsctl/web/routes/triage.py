"""`/triage`: the triage report of one session and the batch over recent sessions, declared in
models/triage.py."""

from __future__ import annotations

from flask import Blueprint

import obsctl.models.triage as models
from obsctl.web.reads import serve_reads

blueprint = Blueprint("triage", __name__)
RATE_GROUP = "triage"

READ_PATHS, READ_MODELS = serve_reads(blueprint, models)
