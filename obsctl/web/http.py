"""Request/response helpers shared by the route modules."""

from __future__ import annotations

import re
from typing import Any, overload

import orjson
from flask import Response, current_app, request

from obsctl.errors import InvalidInput

# Up to 4000 digits (under int()'s 4300-digit limit): a huge value is then refused by its
# range check, which names the range, rather than called "not an integer".
_INTEGER = re.compile(r"-?[0-9]{1,4000}")
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def json_response(data: Any, status: int = 200, headers: dict | None = None) -> Response:
    return Response(orjson.dumps(data), status=status, mimetype="application/json", headers=headers)


def get_store():
    """The app's store (its repositories use the calling thread's connection)."""
    return current_app.extensions["obsctl"].store


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


def int_arg(name: str) -> int | None:
    """An integer query parameter, None when absent; anything but optional `-` and ASCII
    digits (`1_0`, ` 10`, `+1`, `1.0`, empty) is a 400. The service owning the parameter
    checks its range (obsctl/params.py), so the CLI and the API share bounds and messages."""
    raw = request.args.get(name)
    if raw is None:
        return None
    # int() alone would accept `1_0`, surrounding spaces and non-ASCII digits.
    if _INTEGER.fullmatch(raw) is None:
        raise InvalidInput(f"query parameter {name!r} must be an integer, got {raw[:40]!r}")
    return int(raw)


@overload
def bool_arg(name: str, default: bool = False) -> bool: ...
@overload
def bool_arg(name: str, default: None) -> bool | None: ...


def bool_arg(name: str, default: bool | None = False) -> bool | None:
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
