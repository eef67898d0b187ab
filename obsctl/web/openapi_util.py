"""Builders for the OpenAPI 3.1 document, so route modules describe themselves briefly."""

from __future__ import annotations

import msgspec

from obsctl.models.common import NOT_BLANK, Error  # noqa: F401  (NOT_BLANK: part of this vocabulary)
from obsctl.models.ingest import ISO_8601  # noqa: F401  (part of this module's vocabulary)
from obsctl.models.reads import SESSION_ID
from obsctl.models.sessions import Event, Session, SessionDetail
from obsctl.vocabulary import RATE_DEFINITIONS as DEFINITIONS

_SCHEMA_REF = "#/components/schemas/{name}"


_ERROR_NAMES = {
    400: "BadRequest",
    401: "Unauthorized",
    404: "NotFound",
    409: "Conflict",
    413: "TooLarge",
    415: "UnsupportedMediaType",
    429: "RateLimited",
    503: "Unavailable",
    504: "TimedOut",
}


def rate_field(name: str, schema: dict, note: str = "") -> dict:
    """`schema` described by the rate vocabulary's definition of `name` (obsctl/vocabulary.py),
    plus `note` (e.g. which rate a spec field named `error_rate` is)."""
    return {**schema, "description": DEFINITIONS[name] + (f". {note}" if note else "")}


def model_schemas(models) -> dict:
    """The component schemas of declared models (msgspec Structs) and of the models they use.

    A model's `__json_schema_extra__` (what a Struct cannot state, e.g. minProperties) is
    merged into its schema; descriptions from docstrings are joined onto one line.
    """
    _, components = msgspec.json.schema_components(models, ref_template=_SCHEMA_REF)
    clash = [name for name in components if "." in name]
    if clash:  # msgspec qualifies the names of two models called alike: name each once
        raise RuntimeError(f"model names declared twice: {sorted(clash)}")
    for schema in components.values():
        if "description" in schema:
            schema["description"] = " ".join(schema["description"].split())
    for model in models:
        extra = getattr(model, "__json_schema_extra__", None)
        if extra:
            components[model.__name__].update(extra)
    return components


def inline(model) -> dict:
    """A declared model's schema itself, for a body that the document states in place (its
    fields use no other model)."""
    schema = model_schemas((model,))[model.__name__]
    schema.pop("title", None)
    return schema


def ref(model) -> dict:
    """A reference to a declared model's component schema."""
    return {"$ref": _SCHEMA_REF.format(name=model.__name__)}


def json_content(schema: dict, description: str = "OK") -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


# Writes: the disk holding the database is full (nothing stored).
STORAGE_FULL = {"507": json_content({"$ref": "#/components/schemas/Error"},
                                    "The disk holding the database is full; nothing was stored")}


def error_responses(*statuses: int) -> dict:
    return {str(s): {"$ref": f"#/components/responses/{_ERROR_NAMES[s]}"} for s in statuses}


def query_param(name: str, schema: dict, description: str = "", required: bool = False) -> dict:
    param = {"name": name, "in": "query", "required": required, "schema": schema}
    if description:
        param["description"] = description
    return param


def int_query_param(param, description: str = "") -> dict:
    """A bounded integer query parameter (obsctl.params.IntParam): schema and description
    come from its declaration, so the document states what the service accepts."""
    text = f"An integer {param.range_text}; anything else is a 400"
    return query_param(param.name, param.schema(), f"{description}. {text}" if description else text)


def path_param(name: str, description: str = "", example: str | None = None) -> dict:
    param = {"name": name, "in": "path", "required": True, "schema": {"type": "string"},
             "description": description or name}
    if example is not None:
        param["example"] = example
    return param


def session_id_param() -> dict:
    """A session id in a path, as declared reads state it too (models/reads.py SESSION_ID)."""
    return path_param(SESSION_ID.name, SESSION_ID.description, example=SESSION_ID.example)


def operation(tag: str, summary: str, *, params=None, request=None, ok=None, status: int = 200,
              errors: dict | None = None, extra_responses: dict | None = None,
              request_required: bool = True) -> dict:
    """One operation; 401, 429 and 500 responses are added to every operation."""
    op: dict = {"tags": [tag], "summary": summary}
    if params:
        op["parameters"] = params
    if request is not None:
        op["requestBody"] = {"required": request_required, "content": request["content"]}
    responses = {str(status): ok or {"description": "OK"}}
    responses.update(errors or {})
    responses.update(extra_responses or {})
    responses.update(error_responses(401, 429))
    responses["500"] = {"$ref": "#/components/responses/ServerError"}
    op["responses"] = responses
    return op


def _error_response(description: str) -> dict:
    return json_content({"$ref": "#/components/schemas/Error"}, description)


# Models every document has (error bodies; events and sessions, named by several routes).
BASE_MODELS = (Error, Event, Session, SessionDetail)

BASE_COMPONENTS: dict = {
    "securitySchemes": {
        "ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                   "description": "Required on every route but /health when SERVICE_API_KEY is set; "
                                  "`Authorization: Bearer KEY`, or HTTP Basic with the key as "
                                  "the password, are read when X-API-Key is absent"}
    },
    "schemas": {},  # generated from the declared models (model_schemas)
    "responses": {
        "BadRequest": _error_response("Invalid input"),
        "Unauthorized": _error_response("Missing or invalid X-API-Key"),
        "NotFound": _error_response("Not found"),
        "Conflict": _error_response("Conflicts with the current state"),
        "TooLarge": _error_response("Body or batch over the limit"),
        "UnsupportedMediaType": _error_response("Unsupported content type"),
        "RateLimited": _error_response("Rate limit exceeded (see Retry-After)"),
        "Unavailable": _error_response("Temporarily unavailable; retry"),
        "TimedOut": _error_response("Stopped at its time budget; narrow the request (retrying it costs as much again)"),
        "ServerError": _error_response("Internal error"),
    },
}
