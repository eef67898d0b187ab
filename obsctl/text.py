"""Small wording helpers for messages people read (CLI output, report texts)."""

from __future__ import annotations

MISSING = "-"  # "no value" in every text output (terminal, TSV, Markdown); JSON keeps null


def plural(count: int, singular: str, plural_form: str | None = None, *, sep: bool = False) -> str:
    """`1 session`, `2 sessions`, `0 deliveries`: the count and the noun that agrees with it.

    `plural_form` defaults to the singular plus "s"; `sep` writes thousands separators.
    """
    noun = singular if count == 1 else (plural_form or singular + "s")
    return f"{count:,} {noun}" if sep else f"{count} {noun}"
