"""CLI output in one place: the `--json` option, the one switch between JSON and text, the
text of numbers and missing values, and tables (rich on a terminal, TSV when piped).

User text never reaches rich as markup: table cells and titles become `rich.text.Text`
(literal), colour is asked for with `Styled(text, style)`, and anything else printed
through rich passes user parts through `escape`. TSV fields escape tabs, newlines, carriage returns and
backslashes, so each row stays one line with the same number of columns.

Nor does stored text steer the terminal: `show` hands the terminal renderings data whose
control characters are made visible (`\\x1b` for ESC: no screen clearing, OSC 8 link or OSC 52
clipboard write from an agent name), and table cells and TSV fields do the same on their own.
JSON stays exact (JSON escapes them itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import JustifyMethod

import sys
from collections.abc import Callable
from typing import Annotated, Any, NamedTuple

import orjson
import typer

from obsctl.text import MISSING, visible_text

JSON_HELP = "Print the result as JSON (the HTTP API's body where the API has the same call)."
# Declared once; every command that prints data takes `json_: JsonFlag = False`.
JsonFlag = Annotated[bool, typer.Option("--json", help=JSON_HELP)]

_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


class Styled(NamedTuple):
    """Text to show in a colour or style on a terminal; plain text in TSV."""

    text: str
    style: str


def stdout_is_tty() -> bool:
    """Whether stdout is a terminal: the one place output asks (tests patch it here)."""
    return sys.stdout.isatty()


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()


def stdin_is_tty() -> bool:
    """Whether someone can answer a prompt (tests patch it here)."""
    return sys.stdin.isatty()


def show(data: Any, json_: bool, render: Callable[[Any], None], *,
         plain: Callable[[Any], None] | None = None, json_when_piped: bool = False) -> None:
    """The one output switch: JSON with --json; when stdout is not a terminal, JSON for
    reports too rich for a table (`json_when_piped`) or `plain(data)` where the parseable
    form differs from the terminal's; otherwise `render(data)` (whose tables are TSV when
    piped)."""
    if json_:
        emit_json(data)
    elif stdout_is_tty():
        render(visible(data))
    elif json_when_piped:
        emit_json(data)
    else:
        (plain or render)(data)


def visible(data: Any) -> Any:
    """`data` with the control characters of every string in it (keys too) shown as `\\xNN`,
    for a terminal: what reaches a renderer from here cannot move the cursor, clear the
    screen, retitle the window, make links or write the clipboard."""
    if isinstance(data, str):
        return visible_text(data)
    if isinstance(data, dict):
        return {visible(key): visible(value) for key, value in data.items()}
    if isinstance(data, Styled):
        return Styled(visible_text(data.text), data.style)
    if isinstance(data, list | tuple):
        return type(data)(visible(value) for value in data)
    if hasattr(data, "__struct_fields__"):  # a declared model (msgspec Struct): field by field
        return type(data)(**{name: visible(getattr(data, name)) for name in data.__struct_fields__})
    return data


def emit_json(data: Any) -> None:
    """Print JSON on stdout exactly as the API returns it (indented for reading)."""
    sys.stdout.buffer.write(orjson.dumps(data, option=orjson.OPT_INDENT_2, default=_builtins) + b"\n")
    sys.stdout.flush()


def _builtins(value: Any) -> Any:
    """What orjson cannot encode itself: a declared model, as the API encodes it."""
    import msgspec

    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def fmt_number(value: Any, digits: int | None = 2) -> str:
    """A number for people: MISSING for none; thousands separators and `digits` decimals for
    fractions. digits=None writes a threshold or a measured value the way it is typed on
    the command line (`2500`, `0.05`, `33.3333`: six significant digits, no separators)."""
    if value is None:
        return MISSING
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if digits is None:
        return f"{value:.6g}" if isinstance(value, float) else str(value)
    if isinstance(value, int) or value.is_integer():
        return f"{int(value):,}"
    return f"{value:,.{digits}f}"


def fmt_usd(value: float | None) -> str:
    """A cost in USD for people: cents from $1 up, 4 decimals from a cent, 6 below
    (`$12.34`, `$0.0250`, `$0.000375`); MISSING for none (unpriced)."""
    from obsctl.services.pricing import format_usd

    return MISSING if value is None else format_usd(value)


def fmt_percent(value: float | None) -> str:
    """`12.50%`; MISSING for none (a rate with a zero denominator)."""
    return MISSING if value is None else f"{value:.2f}%"


def escape(text: Any) -> str:
    """User text made safe for a rich markup string (`[bold]` prints as typed), its control
    characters visible."""
    from rich.markup import escape as rich_escape

    return rich_escape(visible_text(str(text)))


def tsv_field(value: Any) -> str:
    """One TSV field: MISSING for none; tab, newline, CR and backslash escaped, and every
    other control character shown as `\\xNN`."""
    if value is None:
        return MISSING
    if isinstance(value, Styled):
        value = value.text
    elif isinstance(value, list):
        value = "".join(p.text if isinstance(p, Styled) else str(p) for p in value)
    return visible_text(str(value).translate(_TSV_ESCAPES))


def rich_cell(value: Any):
    """A table cell as literal rich Text: numbers formatted, MISSING for none, `Styled`
    pieces in their style, never markup. A list is pieces shown one after another."""
    from rich.text import Text

    if value is None:
        return Text(MISSING)
    if isinstance(value, Styled):
        return Text(visible_text(value.text), style=value.style)
    if isinstance(value, list):
        return Text.assemble(*[(visible_text(p.text), p.style) if isinstance(p, Styled) else visible_text(str(p))
                               for p in value])
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Text(fmt_number(value))
    return Text(visible_text(str(value)))


def plain_table(headers: list[str], rows: list[list[Any]]) -> None:
    """Tab-separated output for pipes: a header line, then one line per row."""
    out = sys.stdout
    out.write("\t".join(tsv_field(h) for h in headers) + "\n")
    for row in rows:
        out.write("\t".join(tsv_field(v) for v in row) + "\n")


def render_table(title: str | None, headers: list[str], rows: list[list[Any]],
                 justify: dict[str, JustifyMethod] | None = None) -> None:
    """A rich table on a terminal, tab-separated text otherwise."""
    if not stdout_is_tty():
        plain_table(headers, rows)
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(title=None if title is None else Text(visible_text(title)), header_style="bold",
                  show_lines=False)
    for h in headers:
        table.add_column(Text(h), justify=(justify or {}).get(h, "left"), overflow="fold")
    for row in rows:
        table.add_row(*[rich_cell(v) for v in row])
    console().print(table)


def console(stderr: bool = False):
    """A rich console; emoji codes stay as typed (`:x:` in an agent name is not an icon)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, emoji=False)
