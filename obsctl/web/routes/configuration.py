"""`/apply` and `/config`: configuration as code (services/configuration)."""

from __future__ import annotations

from flask import Blueprint

from obsctl.models.configuration import ApplyResult, ConfigDocument, ConfigExport
from obsctl.services import configuration as service
from obsctl.web.http import bool_arg, get_settings, get_store, json_body, json_response
from obsctl.web.openapi_util import error_responses, json_content, operation, query_param, ref

blueprint = Blueprint("configuration", __name__)
RATE_GROUP = "configuration"


@blueprint.post("/apply")
def apply():
    return json_response(service.apply_config(get_store(), get_settings(), json_body(),
                                              dry_run=bool_arg("dry_run"), prune=bool_arg("prune")))


@blueprint.get("/config")
def export():
    return json_response(service.export_config(get_store()))


OPENAPI_MODELS = (ConfigDocument, ConfigExport, ApplyResult)

OPENAPI_PATHS = {
    "/apply": {
        "post": operation(
            "configuration", "Create, update (and with prune, delete) alert rules, webhooks and SLA "
                             "targets to match a document, in one transaction",
            params=[
                query_param("dry_run", {"type": "boolean", "default": False},
                            "Say what would change and change nothing"),
                query_param("prune", {"type": "boolean", "default": False},
                            "Delete what a section of the document does not list"),
            ],
            request=json_content(ref(ConfigDocument)),
            ok=json_content(ref(ApplyResult)),
            errors=error_responses(400),
        ),
    },
    "/config": {
        "get": operation(
            "configuration", "The alert rules, webhooks and SLA targets as a document POST /apply "
                             "takes back unchanged (never a secret)",
            ok=json_content(ref(ConfigExport)),
        ),
    },
}
