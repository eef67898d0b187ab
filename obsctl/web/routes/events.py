from flask import Blueprint

from obsctl.services.ingest import ingest_events, parse_batch_body
from obsctl.web.http import get_db, get_settings, json_body, json_response
from obsctl.web.openapi_util import STORAGE_FULL, error_responses, json_content, operation

blueprint = Blueprint("events", __name__)
RATE_GROUP = "events"


@blueprint.post("/events")
def post_events():
    events = parse_batch_body(json_body(), max_batch=get_settings().max_batch)
    result = ingest_events(get_db(), events)
    return json_response(result.as_response())


OPENAPI_PATHS = {
    "/events": {
        "post": operation(
            "events",
            "Ingest a batch of events (all-or-nothing; idempotent on event_id). At most "
            "OBSCTL_MAX_BATCH events (default 1000) and OBSCTL_MAX_BODY_BYTES (default 10 MiB); "
            "413 beyond either",
            request=json_content({
                "type": "object",
                "required": ["events"],
                "properties": {"events": {"type": "array",
                                          "items": {"$ref": "#/components/schemas/EventInput"}}},
            }),
            ok=json_content({
                "type": "object",
                "required": ["status", "processed", "duplicates"],
                "properties": {
                    "status": {"type": "string", "enum": ["ok"]},
                    "processed": {"type": "integer", "minimum": 0},
                    "duplicates": {"type": "integer", "minimum": 0},
                },
            }),
            errors=error_responses(400, 413, 503),
            extra_responses=STORAGE_FULL,
        )
    }
}
