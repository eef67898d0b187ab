from flask import Blueprint

from obsctl.models.ingest import EventBatch, EventInput, IngestResponse
from obsctl.services.ingest import ingest_events, parse_batch_body
from obsctl.web.http import get_settings, get_store, json_body, json_response
from obsctl.web.openapi_util import STORAGE_FULL, error_responses, json_content, operation, ref

blueprint = Blueprint("events", __name__)
RATE_GROUP = "events"


@blueprint.post("/events")
def post_events():
    settings = get_settings()
    events = parse_batch_body(json_body(), max_batch=settings.max_batch)
    result = ingest_events(get_store(), events, max_future=settings.max_future_skew)
    return json_response(result.as_response())


# EventInput is named for its own minProperties (models/ingest.py).
OPENAPI_MODELS = (EventBatch, EventInput, IngestResponse)

OPENAPI_PATHS = {
    "/events": {
        "post": operation(
            "events",
            "Ingest a batch of events (all-or-nothing; idempotent on event_id). At most "
            "OBSCTL_MAX_BATCH events (default 1000) and OBSCTL_MAX_BODY_BYTES (default 10 MiB); "
            "413 beyond either. The body has only the events key (400 otherwise). An object "
            "that has no event field, or a timestamp more than OBSCTL_MAX_FUTURE_SKEW (default "
            "1 day) ahead of the server clock, is a 400. Fields that are not event fields are "
            "ignored, and reported in warnings",
            request=json_content(ref(EventBatch)),
            ok=json_content(ref(IngestResponse)),
            errors=error_responses(400, 413, 503),
            extra_responses=STORAGE_FULL,
        )
    }
}
