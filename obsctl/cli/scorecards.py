"""`obsctl scorecards`: letter grades per agent (listing by default) and `show AGENT`."""

from __future__ import annotations

import typer

from obsctl.cli import completion
from obsctl.cli.base import ObsTyper, run, settings_of, translate_errors
from obsctl.cli.options import int_option
from obsctl.cli.output import (
    MISSING,
    JsonFlag,
    Styled,
    console,
    render_table,
    rich_cell,
    show,
)
from obsctl.services import scorecards as service
from obsctl.services.scorecards.scoring import DIMENSIONS
from obsctl.text import plural

app = ObsTyper(no_args_is_help=False)

_DAYS = int_option(service.DAYS, "--days", help="Lookback window in days.")
_GRADE_COLOURS = {"A+": "bold green", "A": "green", "B+": "cyan", "B": "cyan", "B-": "cyan",
                  "C+": "yellow", "C": "yellow", "D": "red", "F": "bold red"}
_SPARKS = "▁▂▃▄▅▆▇█"
_SHORT_NAMES = ("reliab.", "perf.", "effic.", "thruput")


def _grade(grade: str | None) -> Styled | None:
    return None if grade is None else Styled(grade, _GRADE_COLOURS.get(grade, "white"))


def _scored(score: float, grade: str | None) -> list:
    return [f"{score:.2f} ", _grade(grade) or MISSING]


@app.callback(invoke_without_command=True)
@translate_errors
def scorecards_command(ctx: typer.Context, days: int = _DAYS, json_: JsonFlag = False) -> None:
    """Grade every agent with a session in the last --days days: overall score and the
    reliability, performance, efficiency and throughput dimensions, best first.

    Example: obsctl scorecards --days 30
    """
    if ctx.invoked_subcommand is not None:
        return
    show(run(ctx, service.list_scorecards, settings_of(ctx), days=days), json_,
         lambda cards: _show_cards(cards, days, tty=True), plain=lambda cards: _show_cards(cards, days))


def _show_cards(cards: list[dict], days: int, tty: bool = False) -> None:
    rows = [[c["agent"], _scored(c["overall_score"], c["grade"]),
             *[_scored(c["dimensions"][d]["score"], c["dimensions"][d]["grade"]) for d in DIMENSIONS],
             c["sessions_analyzed"]] for c in cards]
    # Short dimension headers keep the table within 80 columns on a terminal.
    names = _SHORT_NAMES if tty else DIMENSIONS
    headers = ["agent", "overall", *names, "sessions"]
    render_table(f"scorecards, last {days} day{'s' if days > 1 else ''}", headers, rows,
                 justify={h: "right" for h in headers[1:]})


def _fmt(value, digits: int = 2, unit: str = "") -> str:
    return MISSING if value is None else f"{value:,.{digits}f}{unit}"


def _usd(value: float | None) -> str:
    """`$0.0123`; MISSING (not `$-`) when no model of the window has a known price."""
    return MISSING if value is None else f"${value:,.4f}"


def _details(b: dict) -> dict[str, str]:
    r, p, e, t = b["reliability"], b["performance"], b["efficiency"], b["throughput"]
    return {
        "reliability": f"error events {r['error_events']:,} of {r['body_events']:,} "
                       f"({_fmt(r['error_event_rate'], unit='%')}), error sessions "
                       f"{r['error_sessions']:,} of {r['sessions']:,} "
                       f"({_fmt(r['error_session_rate'], unit='%')})",
        "performance": f"p50 {_fmt(p['p50_duration_ms'], 1, 'ms')} (fleet "
                       f"{_fmt(p['fleet_p50_duration_ms'], 1, 'ms')}), p95 "
                       f"{_fmt(p['p95_duration_ms'], 1, 'ms')} (fleet {_fmt(p['fleet_p95_duration_ms'], 1, 'ms')})",
        "efficiency": f"tokens/session {_fmt(e['tokens_per_session'], 0)} (fleet "
                      f"{_fmt(e['fleet_tokens_per_session'], 0)}), cost/session "
                      f"{_usd(e['cost_per_session'])} (fleet {_usd(e['fleet_cost_per_session'])})",
        "throughput": f"{plural(t['sessions'], 'session')} (fleet {_fmt(t['fleet_sessions'], 1)}), "
                      f"completed {t['completed_sessions']:,} of {t['sessions']:,} "
                      f"({_fmt(t['completion_rate'], unit='%')})",
    }


def _bar(score: float | None, grade: str | None, width: int = 25) -> Styled | list:
    if score is None:
        return Styled("no sessions", "dim")
    filled = round(score / 100 * width)
    colour = _GRADE_COLOURS.get(grade or "", "white")
    return [Styled("█" * filled, colour), Styled("·" * (width - filled), "dim"), " ",
            *_scored(score, grade)]


def _sparkline(points: list[dict]) -> str:
    return "".join(" " if p["overall_score"] is None
                   else _SPARKS[min(len(_SPARKS) - 1, int(p["overall_score"] / 100 * len(_SPARKS)))]
                   for p in points)


@app.command("show")
def show_command(
    ctx: typer.Context,
    agent: str = typer.Argument(..., autocompletion=completion.agents, help="Agent name."),
    days: int = _DAYS,
    json_: JsonFlag = False,
) -> None:
    """Show one agent's scorecard: each dimension's inputs and a daily trend of its overall
    score. JSON when piped.

    Example: obsctl scorecards show support-bot --days 14
    """
    show(run(ctx, service.get_scorecard, settings_of(ctx), agent, days=days), json_,
         _show_card, json_when_piped=True)


def _show_card(card: dict) -> None:
    console().print(rich_cell([
        Styled(card["agent"], "bold"), "  overall ", *_scored(card["overall_score"], card["grade"]),
        f"  ({plural(card['sessions_analyzed'], 'session')}, {plural(card['fleet_agents'], 'agent')} "
        f"in the fleet, {card['since']} to {card['until']})"]))
    details = _details(card["breakdown"])
    render_table("dimensions", ["dimension", "score", "grade", "inputs"],
                 [[d, f"{card['dimensions'][d]['score']:.2f}", _grade(card["dimensions"][d]["grade"]),
                   details[d]] for d in DIMENSIONS], justify={"score": "right"})
    trend = card["trend"]
    render_table(f"daily trend  {_sparkline(trend)}", ["day", "sessions", "error events", "overall score"],
                 [[p["day"], p["sessions"], _errors(p), _bar(p["overall_score"], p["grade"])]
                  for p in trend],
                 justify={"sessions": "right", "error events": "right"})


def _errors(point: dict) -> str:
    """A trend day's error events with their denominator: `5 of 23 (21.74%)`."""
    if not point["body_events"]:
        return MISSING
    return (f"{point['error_events']:,} of {point['body_events']:,} "
            f"({_fmt(point['error_event_rate'], unit='%')})")
