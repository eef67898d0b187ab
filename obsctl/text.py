"""Small wording helpers for messages people read (CLI output, report texts)."""

from __future__ import annotations

import re

MISSING = "-"  # "no value" in every text output (terminal, TSV, Markdown); JSON keeps null


def plural(count: int, singular: str, plural_form: str | None = None, *, sep: bool = False) -> str:
    """`1 session`, `2 sessions`, `0 deliveries`: the count and the noun that agrees with it.

    `plural_form` defaults to the singular plus "s"; `sep` writes thousands separators.
    """
    noun = singular if count == 1 else (plural_form or singular + "s")
    return f"{count:,} {noun}" if sep else f"{count} {noun}"


# Characters that steer a terminal rather than print: C0 controls but tab and newline (ESC
# starts every escape sequence: clearing the screen, OSC 8 links, OSC 52 clipboard writes),
# DEL, and the C1 controls (U+0080-U+009F, single-character CSI and OSC to some terminals).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _hex(match: re.Match) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible_text(text: str) -> str:
    """`text` with each control character shown as `\\xNN` (ESC as `\\x1b`), so that text from
    stored data cannot steer the terminal it is printed on."""
    return CONTROL.sub(_hex, text) if CONTROL.search(text) else text
