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
from obsctl.vocabulary import OPERATOR_WORDS, OPERATORS, operator_words

# The spellings themselves are declared in obsctl/vocabulary.py, where the models read them too.


def normalise_operator(value: Any, allowed: tuple[str, ...] = OPERATORS) -> str:
    """The canonical symbol of an operator spelled as a symbol or a word, else InvalidInput
    naming every accepted spelling."""
    if type(value) is str:
        symbol = OPERATOR_WORDS.get(value.lower(), value)
        if symbol in allowed:
            return symbol
    raise InvalidInput(f"operator must be one of {' '.join(allowed)} (or the words "
                       f"{', '.join(operator_words(allowed))}); got {describe_value(value)}")
