"""`POST /prune` and `GET /db/info`: retention and the database's description, for
`obsctl prune` and `obsctl db info` against a server."""

from __future__ import annotations

import time

from flask import Blueprint

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.models.maintenance import DbInfo, PriceTable, PruneInput, PruneResult, RepriceResult
from obsctl.services import maintenance as service
from obsctl.web.http import bool_arg, get_settings, get_store, json_body, json_response
from obsctl.web.openapi_util import error_responses, json_content, operation, query_param, ref

blueprint = Blueprint("maintenance", __name__)
RATE_GROUP = "maintenance"

# A prune request stops after the batch that ends past this many seconds and answers
# complete: false; the client sends it again with the cutoff (obsctl.client.maintenance).
PRUNE_SECONDS = 10.0
_PRUNE_FIELDS = ("older_than", "dry_run", "cutoff")


@blueprint.post("/prune")
def prune():
    body = json_body()
    if type(body) is not dict:
        raise InvalidInput('the body must be a JSON object {"older_than": "30d", "dry_run": false}')
    unknown = sorted(set(body) - set(_PRUNE_FIELDS))
    if unknown:
        raise InvalidInput(f"unknown field(s) {', '.join(map(repr, unknown))}; "
                           f"expected {', '.join(_PRUNE_FIELDS)}")
    older_than, dry_run, cutoff = (body.get(name) for name in _PRUNE_FIELDS)
    if type(older_than) is not str:
        raise InvalidInput(f"older_than must be an age like 30d, 12h, 90m or 2w; got {describe_value(older_than)}")
    if dry_run is not None and type(dry_run) is not bool:
        raise InvalidInput(f"dry_run must be true or false; got {describe_value(dry_run)}")
    result = service.prune(get_store(), older_than, dry_run=bool(dry_run), cutoff=cutoff,
                           deadline=time.monotonic() + PRUNE_SECONDS,
                           idle_timeout=get_settings().session_idle_timeout)
    result.setdefault("complete", True)
    return json_response(result)


@blueprint.get("/db/info")
def db_info():
    settings = get_settings()
    where = settings.db_display if settings.db_url else settings.db_path
    return json_response(service.db_info(get_store(), where, check=bool_arg("check", True)))


@blueprint.post("/db/reprice")
def reprice():
    return json_response(service.reprice(get_store()))


OPENAPI_MODELS = (PruneInput, PruneResult, DbInfo, PriceTable, RepriceResult)

OPENAPI_PATHS = {
    "/prune": {
        "post": operation(
            "maintenance",
            "Delete sessions (with their events) whose last activity is older than older_than",
            request=json_content(ref(PruneInput)),
            ok=json_content(ref(PruneResult)),
            errors=error_responses(400),
        ),
    },
    "/db/info": {
        "get": operation(
            "maintenance",
            "The database: where it is, its size, schema version, row counts and integrity",
            params=[query_param("check", {"type": "boolean", "default": True},
                                "Run the integrity check (it reads the whole SQLite file); false skips it")],
            ok=json_content(ref(DbInfo)),
            errors=error_responses(400),
        ),
    },
    "/db/reprice": {
        "post": operation(
            "maintenance",
            "Cost every stored event and session again with the server's price table "
            "(genai-prices and its OBSCTL_PRICES), after either changed",
            ok=json_content(ref(RepriceResult)),
            errors=error_responses(400),
        ),
    },
}
