"""Request/response helpers shared by the route modules."""

from __future__ import annotations

from typing import Any

import orjson
from flask import Response, current_app, request

from obsctl.errors import InvalidInput

_INT_BOUND = 2**53
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def json_response(data: Any, status: int = 200, headers: dict | None = None) -> Response:
    return Response(orjson.dumps(data), status=status, mimetype="application/json", headers=headers)


def get_db():
    """The calling thread's connection to the app's database."""
    return current_app.extensions["obsctl"].pool.get()


def get_settings():
    return current_app.extensions["obsctl"].settings


def json_body(*, required: bool = True) -> Any:
    """Parse the request body as JSON (orjson); malformed JSON is a 400."""
    data = request.get_data(cache=False)
    if not data.strip():
        if required:
            raise InvalidInput("request body must be a JSON document")
        return None
    return _loads(data)


def _loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"malformed JSON in request body: {exc}") from None


def int_arg(name: str, default: int | None = None, *, minimum: int | None = None,
            maximum: int | None = None) -> int | None:
    """An integer query parameter; not an integer is a 400, out of range is clamped."""
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise InvalidInput(f"query parameter {name!r} must be an integer, got {raw[:40]!r}") from None
    # Far beyond any real count; bounding here keeps SQLite's 64-bit integers safe.
    value = max(-_INT_BOUND, min(value, _INT_BOUND))
    if minimum is not None and value < minimum:
        value = minimum
    if maximum is not None and value > maximum:
        value = maximum
    return value


def bool_arg(name: str, default: bool = False) -> bool:
    raw = request.args.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InvalidInput(f"query parameter {name!r} must be true or false, got {raw!r}")


def str_arg(name: str, default: str | None = None) -> str | None:
    raw = request.args.get(name)
    return default if raw is None or raw == "" else raw
