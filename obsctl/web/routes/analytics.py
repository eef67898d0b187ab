"""`GET /analytics`: aggregate analytics across all sessions (spec 2.5)."""

from flask import Blueprint

from obsctl.models.analytics import Analytics
from obsctl.services.analytics import get_analytics
from obsctl.web.http import get_store, json_response
from obsctl.web.openapi_util import json_content, operation, ref

blueprint = Blueprint("analytics", __name__)
RATE_GROUP = "analytics"


@blueprint.get("/analytics")
def analytics():
    return json_response(get_analytics(get_store()))


OPENAPI_MODELS = (Analytics,)

OPENAPI_PATHS = {
    "/analytics": {
        "get": operation(
            "analytics",
            "Aggregate analytics across all sessions",
            ok=json_content(ref(Analytics)),
        )
    }
}
