"""Fast JSON in and out (orjson), with the conversions obsctl needs in one place."""

from __future__ import annotations

from typing import Any

import orjson

from obsctl.errors import InvalidInput

JSONDecodeError = orjson.JSONDecodeError


def dumps(value: Any) -> str:
    """Serialise to a compact JSON string (UTF-8 text, non-ASCII kept as is)."""
    return orjson.dumps(value).decode()


def dumps_bytes(value: Any, *, indent: bool = False) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0)


def loads(data: str | bytes) -> Any:
    """Parse JSON; malformed input raises InvalidInput with the parser's reason."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"malformed JSON: {exc}") from None


def loads_column(text: str | None) -> Any:
    """Decode a JSON column read back from the database (NULL stays None)."""
    if text is None:
        return None
    return orjson.loads(text)


def describe_value(value: Any) -> str:
    """A value as a user wrote it, for `...; got X` messages: JSON names, not Python's.

    `True` is "boolean true" and `None` is "null", so a message about a JSON body never says
    "got True"; strings are quoted (and shortened), numbers shown as they are.
    """
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if value is None:
        return "null"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "...")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
