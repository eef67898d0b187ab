from flask import Blueprint, current_app

from obsctl import __version__
from obsctl.models.health import Health
from obsctl.timeutil import now_iso
from obsctl.web.http import json_response
from obsctl.web.openapi_util import ref

blueprint = Blueprint("health", __name__)
RATE_GROUP = "health"


@blueprint.get("/health")
def health():
    # No database query: /health answers at once whatever the database is doing.
    state = current_app.extensions["obsctl"]
    check = state.db_check or {"quick_check": "not run", "checked_at": None}
    return json_response({
        "status": "ok", "timestamp": now_iso(), "version": __version__,
        "database": {"quick_check": check["quick_check"], "checked_at": check["checked_at"],
                     "writes_waiting": state.store.writes_waiting},
    })


OPENAPI_MODELS = (Health,)

OPENAPI_PATHS = {
    "/health": {
        "get": {
            "tags": ["health"],
            "summary": "Liveness check (never needs the API key)",
            "security": [],
            "responses": {
                "200": {
                    "description": "The service is up",
                    "content": {"application/json": {"schema": ref(Health)}},
                },
                "429": {"$ref": "#/components/responses/RateLimited"},
            },
        }
    }
}
