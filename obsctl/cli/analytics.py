"""`obsctl analytics`: overview, top agents, models, event types and activity over time."""

from __future__ import annotations

from datetime import date, timedelta

import typer

from obsctl.cli.base import run, translate_errors
from obsctl.cli.output import MISSING, JsonFlag, console, escape, fmt_number, fmt_usd, rich_cell, show

CHART_DAYS = 14
BAR_WIDTH = 40
_SPARKS = "·▁▂▃▄▅▆▇█"


@translate_errors
def analytics_command(
    ctx: typer.Context,
    json_: JsonFlag = False,
) -> None:
    """Analytics across all sessions.

    Overview, session durations, top agents by tokens, model usage, event types, sessions
    per day (last 90 days), events per hour of day (UTC), and costs (USD, stored at ingest)
    per agent, per model and per day; `unpriced` counts calls of models without a known price.

    On a terminal: a panel, tables and a bar chart; piped (or with --json): the API's JSON.

    `overview.error_rate` (also named `error_session_rate`) is the percent of sessions whose
    status is error, not of events.

    Example: obsctl analytics --json | jq '.costs.by_model[] | [.model, .cost_usd]'
    """
    from obsctl.services.analytics import get_analytics

    show(run(ctx, get_analytics), json_, _render, json_when_piped=True)


def daily_series(points: list[dict], last_day: date, days: int) -> list[tuple[str, int]]:
    """(day, session_count) for each of the `days` days up to `last_day`, gaps as 0."""
    counts = {p["day"]: p["session_count"] for p in points}
    series = []
    for offset in range(days - 1, -1, -1):
        day = (last_day - timedelta(days=offset)).isoformat()
        series.append((day, counts.get(day, 0)))
    return series


def sparkline(values: list[int]) -> str:
    top = max(values, default=0)
    if top == 0:
        return _SPARKS[0] * len(values)
    return "".join(_SPARKS[round(v / top * (len(_SPARKS) - 1))] for v in values)


def _render(data: dict) -> None:
    from rich.panel import Panel
    from rich.table import Table

    from obsctl.timeutil import now

    out = console()
    o, d = data["overview"], data["duration"]
    out.print(Panel(
        f"sessions [bold]{fmt_number(o['total_sessions'])}[/bold]  "
        f"([cyan]{fmt_number(o['active_sessions'])} active[/cyan], "
        f"[green]{fmt_number(o['completed_sessions'])} completed[/green], "
        f"[red]{fmt_number(o['error_sessions'])} error[/red]); in error: "
        f"{fmt_number(o['error_sessions'])} of {fmt_number(o['total_sessions'])} sessions "
        f"({o['error_session_rate']:.2f}%)\n"
        f"events [bold]{fmt_number(o['total_events'])}[/bold] "
        f"({fmt_number(sum(t['count'] for t in data['event_types']))} without session start/end)  tokens [bold]{fmt_number(o['total_tokens'])}[/bold] "
        f"({fmt_number(o['total_tokens_in'])} in / {fmt_number(o['total_tokens_out'])} out, "
        f"{fmt_number(o['avg_tokens_per_session'])} per session)\n"
        f"session duration ms: avg {fmt_number(d['avg_ms'])}, min {fmt_number(d['min_ms'])}, max {fmt_number(d['max_ms'])}\n"
        f"first session {escape(o['earliest_session'] or MISSING)}  "
        f"latest {escape(o['latest_session'] or MISSING)}",
        title="analytics", expand=False,
    ))

    def table(title: str, headers: list[str], rows: list[list]) -> None:
        if not rows:
            return
        t = Table(title=title, header_style="bold", title_justify="left")
        for i, h in enumerate(headers):
            t.add_column(h, justify="left" if i == 0 else "right")
        for row in rows:
            t.add_row(*[rich_cell(r) for r in row])
        out.print(t)

    table("top agents (by tokens)", ["agent", "sessions", "tokens", "avg tokens"],
          [[a["agent_name"], a["session_count"], a["total_tokens"], a["avg_tokens"]]
           for a in data["top_agents"]])
    # The cache and reasoning columns only when some model reported such tokens.
    parts = [(key, label) for key, label in (("total_tokens_cache_read", "cache read"),
                                             ("total_tokens_cache_write", "cache write"),
                                             ("total_tokens_reasoning", "reasoning"))
             if any(m.get(key) for m in data["model_usage"])]
    table("model usage", ["model", "calls", "tokens in", *(label for _, label in parts), "tokens out", "avg ms"],
          [[m["model"], m["call_count"], m["total_tokens_in"], *(m[key] for key, _ in parts),
            m["total_tokens_out"], m["avg_duration_ms"]] for m in data["model_usage"]])
    costs = data["costs"]
    table(f"cost per agent (total {fmt_usd(costs['total_usd'])}, {fmt_number(costs['unpriced_calls'])} unpriced calls)",
          ["agent", "sessions", "cost", "unpriced"],
          [[a["agent_name"], a["session_count"], fmt_usd(a["cost_usd"]), a["unpriced_calls"]]
           for a in costs["by_agent"]])
    table("cost per model", ["model", "calls", "cost", "unpriced"],
          [[m["model"] or MISSING, m["call_count"], fmt_usd(m["cost_usd"]), m["unpriced_calls"]]
           for m in costs["by_model"]])
    table(f"cost per day (last {CHART_DAYS} days with sessions, UTC)", ["day", "sessions", "cost", "unpriced"],
          [[d["day"], d["session_count"], fmt_usd(d["cost_usd"]), d["unpriced_calls"]]
           for d in costs["by_day"][-CHART_DAYS:]])
    table("event types", ["event type", "count"],
          [[e["event_type"], e["count"]] for e in data["event_types"]])

    today = now().date()
    recent = daily_series(data["sessions_over_time"], today, CHART_DAYS)
    top = max((n for _, n in recent), default=0)
    chart = Table(title=f"sessions per day (last {CHART_DAYS} days, UTC)", header_style="bold",
                  title_justify="left", show_header=False, box=None)
    chart.add_column("day")
    chart.add_column("sessions", justify="right")
    chart.add_column("bar")
    for day, n in recent:
        chart.add_row(day, fmt_number(n), "[cyan]" + "█" * (round(n / top * BAR_WIDTH) if top else 0) + "[/cyan]")
    out.print(chart)
    quarter = [n for _, n in daily_series(data["sessions_over_time"], today, 90)]
    out.print(f"90 days  [cyan]{sparkline(quarter)}[/cyan]")
    hours = [h["event_count"] for h in data["hourly_activity"]]
    out.print(f"by hour  [magenta]{sparkline(hours)}[/magenta]  (00-23 UTC)")
