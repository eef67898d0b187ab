"""`obsctl compare`: two sessions side by side with the deltas of B against A."""

from __future__ import annotations

import typer

from obsctl.cli.base import (
    console,
    emit_json,
    fmt_number,
    open_readonly,
    plain_table,
    stdout_is_tty,
    translate_errors,
)

_LABELS = {
    "total_tokens": "total tokens",
    "tokens_in": "tokens in",
    "tokens_out": "tokens out",
    "event_count": "events",
    "error_count": "errors",
    "total_processing_ms": "processing ms",
    "avg_event_duration_ms": "avg event ms",
}


@translate_errors
def compare_command(
    ctx: typer.Context,
    session_a: str = typer.Argument(..., help="Baseline session id (A)."),
    session_b: str = typer.Argument(..., help="Session compared against it (B)."),
    json_: bool = typer.Option(False, "--json", help="Print the API's JSON body."),
) -> None:
    """Compare session B against baseline session A.

    Tokens, events, errors and processing time with absolute and percent deltas (negative
    means B used less), and the models, event types and tools of each.

    Piped output is tab-separated: metric, A, B, delta, percent.

    Example: obsctl compare sess-41 sess-42
    """
    from obsctl.services.sessions.compare import compare_sessions

    data = compare_sessions(open_readonly(ctx), session_a, session_b)
    if json_:
        emit_json(data)
        return
    a, b, deltas = data["session_a"], data["session_b"], data["deltas"]
    if not stdout_is_tty():
        plain_table(["metric", "a", "b", "delta", "percent"], [
            [key, a[key], b[key], d["absolute"], d["percent"]] for key, d in deltas.items()
        ])
        return
    _render(data)


def _coloured(text: str, value) -> str:
    # Negative means B used less: green; more is red; unchanged or unknown is dim.
    if value is None or value == 0:
        return f"[dim]{text}[/dim]"
    return f"[green]{text}[/green]" if value < 0 else f"[red]{text}[/red]"


def _render(data: dict) -> None:
    from rich.table import Table

    a, b = data["session_a"], data["session_b"]
    out = console()
    table = Table(title=f"A = {a['session_id']}   B = {b['session_id']}", header_style="bold")
    for name, justify in (("", "left"), ("A", "right"), ("B", "right"), ("delta", "right"),
                          ("delta %", "right")):
        table.add_column(name, justify=justify)
    table.add_row("agent", a["agent_name"], b["agent_name"], "", "")
    table.add_row("status", a["status"], b["status"], "", "")
    table.add_row("duration ms", fmt_number(a["session_duration_ms"]), fmt_number(b["session_duration_ms"]), "", "")
    for key, d in data["deltas"].items():
        absolute = ("+" if d["absolute"] > 0 else "") + fmt_number(d["absolute"])
        percent = "n/a" if d["percent"] is None else f"{d['percent']:+.2f}%"
        table.add_row(_LABELS[key], fmt_number(a[key]), fmt_number(b[key]),
                      _coloured(absolute, d["absolute"]), _coloured(percent, d["percent"]))
    out.print(table)

    breakdown = Table(header_style="bold", title="breakdown (A / B)")
    for name, justify in (("kind", "left"), ("name", "left"), ("A", "right"), ("B", "right")):
        breakdown.add_column(name, justify=justify)
    for kind, key, count in (("model", "models", lambda v: v["calls"]),
                             ("event type", "event_types", lambda v: v),
                             ("tool", "tools", lambda v: v["calls"])):
        for name in sorted(a[key].keys() | b[key].keys()):
            left, right = a[key].get(name), b[key].get(name)
            breakdown.add_row(kind, name, "-" if left is None else fmt_number(count(left)),
                              "-" if right is None else fmt_number(count(right)))
    if breakdown.row_count:
        out.print(breakdown)
