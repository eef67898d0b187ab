from flask import Blueprint, current_app

from obsctl import __version__
from obsctl.timeutil import now_iso
from obsctl.web.http import json_response

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


OPENAPI_PATHS = {
    "/health": {
        "get": {
            "tags": ["health"],
            "summary": "Liveness check (never needs the API key)",
            "security": [],
            "responses": {
                "200": {
                    "description": "The service is up",
                    "content": {"application/json": {"schema": {
                        "type": "object",
                        "required": ["status", "timestamp"],
                        "properties": {
                            "status": {"type": "string", "enum": ["ok"]},
                            "timestamp": {"$ref": "#/components/schemas/Timestamp"},
                            "version": {"type": "string"},
                            "database": {
                                "type": "object",
                                "properties": {
                                    "quick_check": {
                                        "type": "string",
                                        "enum": ["ok", "skipped", "not run"],
                                        "description": "SQLite's quick_check at `obsctl serve` start "
                                                       "(a damaged database is refused)",
                                    },
                                    "checked_at": {"type": ["string", "null"]},
                                    "writes_waiting": {
                                        "type": "integer", "minimum": 0,
                                        "description": "writes waiting in the writer queue now",
                                    },
                                },
                            },
                        },
                    }}},
                },
                "429": {"$ref": "#/components/responses/RateLimited"},
            },
        }
    }
}
