"""Comparison operators of alert rules and SLA targets: one spelling rule everywhere.

The canonical spellings are the symbols `<`, `>`, `<=`, `>=`, `==`, `!=`; they are what is
stored and returned. Because `<` and `>` are shell redirections, the words `lt`, `gt`, `le`
(`lte`), `ge` (`gte`), `eq` and `ne` are accepted as well, in any case, by the CLI and the
HTTP API alike, and are turned into the symbol. Alert rules take all six operators; SLA
targets only `<=` and `>=` (and their words).
"""

from __future__ import annotations

from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value

SYMBOLS = ("<", ">", "<=", ">=", "==", "!=")
WORDS = {"lt": "<", "gt": ">", "le": "<=", "lte": "<=", "ge": ">=", "gte": ">=", "eq": "==", "ne": "!="}


def words_for(allowed: tuple[str, ...]) -> list[str]:
    """The word spellings of the `allowed` symbols, in WORDS order."""
    return [word for word, symbol in WORDS.items() if symbol in allowed]


def spellings(allowed: tuple[str, ...] = SYMBOLS) -> list[str]:
    """Every accepted spelling of the `allowed` operators (for the OpenAPI enum)."""
    return [*allowed, *words_for(allowed)]


def normalise_operator(value: Any, allowed: tuple[str, ...] = SYMBOLS) -> str:
    """The canonical symbol of an operator spelled as a symbol or a word, else InvalidInput
    naming every accepted spelling."""
    if type(value) is str:
        symbol = WORDS.get(value.lower(), value)
        if symbol in allowed:
            return symbol
    raise InvalidInput(f"operator must be one of {' '.join(allowed)} (or the words "
                       f"{', '.join(words_for(allowed))}); got {describe_value(value)}")
