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
