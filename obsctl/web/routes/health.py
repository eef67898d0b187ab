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
    # SQLite: no query, /health answers at once whatever the writer is doing (the file is
    # local). PostgreSQL and Redis are other machines: a load balancer must learn when this
    # instance cannot reach them, so each gets one cheap round trip, and either down is a 503.
    state = current_app.extensions["obsctl"]
    check = state.db_check or {"quick_check": "not run", "checked_at": None}
    database = {"backend": state.store.backend, "reachable": True,
                "quick_check": check["quick_check"], "checked_at": check["checked_at"],
                "writes_waiting": state.store.writes_waiting}
    problem = _ping(getattr(state.store, "ping", None))
    if problem:
        database.update(reachable=False, error=problem)
    body = {"status": "ok", "timestamp": now_iso(), "version": __version__, "database": database}
    if state.settings.ratelimit_storage_uri.startswith(("redis://", "rediss://", "redis+")):
        redis_problem = _ping(_limiter_storage_check())
        body["redis"] = {"reachable": not redis_problem}
        if redis_problem:
            body["redis"]["error"] = redis_problem
        problem = problem or redis_problem
    if problem:
        body["status"] = "unavailable"
        return json_response(body, status=503)
    return json_response(body)


def _ping(check) -> str | None:
    """None when `check()` succeeds (or there is nothing to check), else the reason."""
    if check is None:
        return None
    try:
        answer = check()
    except Exception as exc:  # noqa: BLE001 (any failure to answer is "unreachable")
        return getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return "no answer" if answer is False else None


def _limiter_storage_check():
    limiter = current_app.extensions.get("limiter")
    limiters = limiter if isinstance(limiter, set | list | tuple) else [limiter]
    for each in limiters:
        storage = getattr(each, "storage", None)  # the configured one, not the memory fallback
        if storage is not None:
            return storage.check
    return None


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
                "503": {
                    "description": "The database or the rate-limit Redis cannot be reached",
                    "content": {"application/json": {"schema": ref(Health)}},
                },
                "429": {"$ref": "#/components/responses/RateLimited"},
            },
        }
    }
}
