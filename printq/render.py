"""Terminal and plain-text renderings of the metrics listing (the only user of rich)."""

from __future__ import annotations

COLUMNS = ("metric", "group", "type", "unit", "count", "minimum", "maximum", "average")
HEADERS = ("Metric", "Group", "Type", "Unit", "Valid", "Min", "Max", "Average")


_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return repr(value) if isinstance(value, float) else str(value)


def metrics_tsv(rows: list[dict]) -> str:
    """Tab-separated values with a header line: easy to cut, sort or load elsewhere. Tabs,
    line breaks and backslashes in metric names are escaped, so each row stays one line."""
    lines = ["\t".join(COLUMNS)]
    lines += ["\t".join(_cell(row[c]).translate(_TSV_ESCAPES) for c in COLUMNS) for row in rows]
    return "\n".join(lines) + "\n"


def metrics_table(rows: list[dict], data_path: str) -> None:
    """A rich table for people at a terminal."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Cells and caption are literal Text: a metric or file named `[/x]` is not rich markup.
    # Borderless and short headers so the whole table fits an 80-column terminal without wrapping.
    table = Table(caption=Text(f"data: {data_path}"), caption_justify="left", box=box.SIMPLE_HEAD)
    for column, header in zip(COLUMNS, HEADERS):
        numeric = column in ("count", "minimum", "maximum", "average")
        table.add_column(header, justify="right" if numeric else "left", no_wrap=True)
    for row in rows:
        average = row["average"]
        cells = [_cell(row[c]) for c in COLUMNS]
        cells[-1] = "-" if average is None else f"{average:.6g}"  # display only; --json is exact
        table.add_row(*[Text(cell) for cell in cells])
    Console(emoji=False).print(table)
