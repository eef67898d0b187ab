from flask import Blueprint

from obsctl import __version__
from obsctl.timeutil import now_iso
from obsctl.web.http import json_response

blueprint = Blueprint("health", __name__)
RATE_GROUP = "health"


@blueprint.get("/health")
def health():
    return json_response({"status": "ok", "timestamp": now_iso(), "version": __version__})


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
                        },
                    }}},
                },
                "429": {"$ref": "#/components/responses/RateLimited"},
            },
        }
    }
}
