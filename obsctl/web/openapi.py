"""`GET /openapi.json`: the OpenAPI 3.1 document, assembled from the route modules and the
declared models they name (OPENAPI_MODELS)."""

from __future__ import annotations

import copy

from flask import Blueprint

from obsctl import __version__
from obsctl.web.http import json_response
from obsctl.web.openapi_util import BASE_COMPONENTS, BASE_MODELS, json_content, model_schemas, operation
from obsctl.web.routes import route_modules

blueprint = Blueprint("openapi", __name__)

OPENAPI_PATHS = {
    "/openapi.json": {
        "get": operation("meta", "This OpenAPI 3.1 document",
                         ok=json_content({"type": "object"}))
    }
}


def build_document() -> dict:
    components = copy.deepcopy(BASE_COMPONENTS)
    paths: dict = {}
    models: list = list(BASE_MODELS)
    for module in route_modules():
        paths.update(getattr(module, "OPENAPI_PATHS", {}))
        models.extend(getattr(module, "OPENAPI_MODELS", ()))
        # The reads the module serves from its area's declarations (web/reads.py).
        for path, item in getattr(module, "READ_PATHS", {}).items():
            written = paths.get(path, {})
            if written.keys() & item.keys():
                raise RuntimeError(f"{path} is both declared as a read and written in {module.__name__}")
            paths[path] = {**written, **item}  # a copy: the module's own paths stay as written
        models.extend(getattr(module, "READ_MODELS", ()))
    components["schemas"] = model_schemas(models)
    paths.update(OPENAPI_PATHS)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "obsctl API",
            "version": __version__,
            "description": "Agent observability: ingest events, read sessions, analytics, alerts, "
                           "triage, postmortems, SLA targets and scorecards.",
        },
        "servers": [{"url": "/"}],
        "security": [{"ApiKey": []}],
        "paths": paths,
        "components": components,
    }


@blueprint.get("/openapi.json")
def openapi_document():
    return json_response(build_document())
