"""`obsctl compare`: two sessions side by side with the deltas of B against A."""

from __future__ import annotations

import typer

from obsctl.cli import completion
from obsctl.cli.base import run, translate_errors
from obsctl.cli.output import (
    MISSING,
    JsonFlag,
    Styled,
    console,
    fmt_number,
    fmt_usd,
    plain_table,
    rich_cell,
    show,
)

_LABELS = {
    "total_tokens": "total tokens",
    "tokens_in": "tokens in",
    "tokens_out": "tokens out",
    "tokens_cache_read": "  cache read",
    "tokens_cache_write": "  cache write",
    "tokens_reasoning": "  reasoning",
    "event_count": "events",
    "error_count": "errors",
    "total_processing_ms": "processing ms",
    "avg_event_duration_ms": "avg event ms",
    "session_duration_ms": "wall-clock ms",
    "cost_usd": "cost USD",
}

# The parts of the token counts (cache read and write of the input, reasoning of the output).
_PARTS = ("tokens_cache_read", "tokens_cache_write", "tokens_reasoning")


@translate_errors
def compare_command(
    ctx: typer.Context,
    session_a: str = typer.Argument(..., autocompletion=completion.sessions, help="Baseline session id (A)."),
    session_b: str = typer.Argument(..., autocompletion=completion.sessions, help="Session compared against it (B)."),
    json_: JsonFlag = False,
) -> None:
    """Compare session B against baseline session A.

    Tokens, events, errors, processing time and cost (USD, from the costs stored at ingest;
    no delta when either session has no priced call) with absolute and percent deltas
    (negative means B used less), and the models, event types and tools of each.

    Piped output is tab-separated: metric, A, B, delta, percent.

    Example: obsctl compare sess-41 sess-42
    """
    from obsctl.services.sessions.compare import compare_sessions

    show(run(ctx, compare_sessions, session_a, session_b), json_, _render, plain=_plain)


def _coloured(text: str, value) -> Styled:
    # Negative means B used less: green; more is red; unchanged or unknown is dim.
    if value is None or value == 0:
        return Styled(text, "dim")
    return Styled(text, "green" if value < 0 else "red")


def _plain(data: dict) -> None:
    a, b = data["session_a"], data["session_b"]
    plain_table(["metric", "a", "b", "delta", "percent"], [
        [key, a[key], b[key], d["absolute"], d["percent"]] for key, d in data["deltas"].items()
    ] + [[f"avg_ms:{model}", m["a_avg_ms"], m["b_avg_ms"], m["absolute"], m["percent"]]
         for model, m in data["model_latency"].items()])


def _delta_cells(d: dict, shown=fmt_number) -> tuple:
    """The coloured delta and delta % cells of one Delta (dashes when unknown)."""
    if d["absolute"] is None:
        return MISSING, MISSING
    absolute = ("+" if d["absolute"] > 0 else "") + shown(d["absolute"])
    percent = MISSING if d["percent"] is None else f"{d['percent']:+.2f}%"
    return _coloured(absolute, d["absolute"]), _coloured(percent, d["percent"])


def _table(columns: tuple[str, ...], left: int = 1, **options):
    """A rich Table whose first `left` columns are left-aligned and the others (numbers)
    right-aligned."""
    from rich.table import Table

    table = Table(header_style="bold", **options)
    for n, name in enumerate(columns):
        table.add_column(name, justify="left" if n < left else "right")
    return table


def _render(data: dict) -> None:
    a, b, deltas = data["session_a"], data["session_b"], data["deltas"]
    from rich.text import Text

    out = console()
    table = _table(("", "A", "B", "delta", "delta %"),
                   title=Text(f"A = {a['session_id']}   B = {b['session_id']}"))

    def row(*cells) -> None:
        table.add_row(*[rich_cell(c) for c in cells])

    row("agent", a["agent_name"], b["agent_name"], "", "")
    row("status", a["status"], b["status"], "", "")
    for key, d in deltas.items():
        if key in _PARTS and not a[key] and not b[key]:
            continue  # neither session reported any: a row of zeros says nothing
        if key == "cost_usd":
            row(_LABELS[key], fmt_usd(a[key]) if a[key] is not None else None,
                fmt_usd(b[key]) if b[key] is not None else None, *_delta_cells(d, fmt_usd))
        else:
            row(_LABELS[key], a[key], b[key], *_delta_cells(d))
    out.print(table)

    latency = _table(("model", "calls", "mean ms per call", "delta", "delta %"), title="models (A / B)")

    def pair(left, right) -> str:
        return f"{rich_cell(left).plain} / {rich_cell(right).plain}"

    for model, m in data["model_latency"].items():
        calls = [side["models"].get(model, {}).get("calls") for side in (a, b)]
        latency.add_row(rich_cell(model), rich_cell(pair(*calls)),
                        rich_cell(pair(m["a_avg_ms"], m["b_avg_ms"])), *map(rich_cell, _delta_cells(m)))
    if latency.row_count:
        out.print(latency)

    breakdown = _table(("kind", "name", "A", "B"), left=2, title="breakdown (A / B)")
    for kind, key, count in (("event type", "event_types", lambda v: v),
                             ("tool", "tools", lambda v: v["calls"])):
        for name in sorted(a[key].keys() | b[key].keys()):
            left, right = a[key].get(name), b[key].get(name)
            breakdown.add_row(*[rich_cell(c) for c in (kind, name, None if left is None else count(left),
                                                        None if right is None else count(right))])
    if breakdown.row_count:
        out.print(breakdown)
