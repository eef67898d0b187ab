"""`obsctl triage`: triage one session (`obsctl triage ID`) or the most recent ones (`batch`)."""

from __future__ import annotations

import typer
from typer.core import TyperGroup

from obsctl.cli import completion
from obsctl.cli.base import ObsTyper, run, settings_of
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import MISSING, JsonFlag, Styled, console, escape, render_table, show
from obsctl.services import incidents
from obsctl.services import triage as service
from obsctl.services.rates import format_percent
from obsctl.text import plural

TOP_FINDING_CHARS = 60
SEVERITY_COLOURS = {"critical": "bold red", "warning": "yellow", "info": "cyan", "healthy": "green"}


class DefaultCommandGroup(TyperGroup):
    """A group whose first argument, when it is not one of its commands, goes to `show`:
    `obsctl triage ID` is `obsctl triage show ID`. A session literally named like a command
    stays reachable through `show` (`obsctl triage show batch`)."""

    default_command = "show"

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = [self.default_command, *args]
        return super().resolve_command(ctx, args)


app = ObsTyper(
    cls=DefaultCommandGroup,
    help="Triage sessions: health score, grade and severity-ranked findings with suggestions.\n\n"
         "`obsctl triage ID` is short for `obsctl triage show ID`.\n\n"
         "Example: obsctl triage sess-42",
)


def _pricer(ctx: typer.Context):
    from obsctl.services.pricing import pricer_for

    return pricer_for(settings_of(ctx))


def colour(severity: str, text: str | None = None) -> str:
    """`text` (default: the severity) in the severity's colour, as rich markup."""
    style = SEVERITY_COLOURS.get(severity, "white")
    return f"[{style}]{text or severity}[/{style}]"


@app.command("show")
def show_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., autocompletion=completion.sessions, help="Session id."),
    json_: JsonFlag = False,
) -> None:
    """Triage one session: score, grade, findings coloured by severity, suggestions.

    Prints JSON when --json is given or stdout is not a terminal.

    Example: obsctl triage show sess-42 --json
    """
    show(run(ctx, service.triage_session, session_id, pricer=_pricer(ctx)), json_,
         render_report, json_when_piped=True)


def render_report(report: dict) -> None:
    """The report as a rich panel, the findings, and the error-group and tool tables."""
    from rich.panel import Panel

    out = console()
    m = report["metrics"]
    cost = "unpriced" if m["cost_usd"] is None else f"${m['cost_usd']:.4f}"
    duration = MISSING if m["duration_ms"] is None else f"{m['duration_ms'] / 1000:.1f} s"
    severity = report["severity"]
    # The severity is the worst finding's while the score sums every term, so a high score
    # can sit beside a critical finding: name the finding that set the severity.
    worst = report["findings"][0] if report["findings"] else None
    because = f" from {worst['category']}: {escape(worst['title'])}" if worst else ""
    header = (
        f"[bold]Health {report['health_score']:g}/100[/bold]  grade [bold]{report['grade']}[/bold]  "
        f"{colour(severity, severity.upper())}{because}\n"
        f"agent {escape(report['agent_name'])} · status {report['status']} · "
        f"{plural(m['event_count'], 'event', sep=True)} ({m['body_events']:,} without session start/end), "
        f"{m['error_events']:,} of {m['body_events']:,} failed ({format_percent(m['error_event_rate'])}) · "
        f"{plural(m['total_tokens'], 'token', sep=True)} · {cost} · {duration}"
    )
    out.print(Panel(header, title=f"triage {escape(report['session_id'])}", expand=False,
                    border_style=SEVERITY_COLOURS.get(severity, "white")))
    if not report["findings"]:
        out.print("[green]No findings: the session looks healthy.[/green]")
    for finding in report["findings"]:
        out.print(f"{colour(finding['severity'], finding['severity'].upper()):<10} "
                  f"[bold]{finding['category']}[/bold]  {escape(finding['title'])}")
        out.print(f"    {escape(finding['detail'])}", highlight=False)
        out.print(f"    [dim]→ {escape(finding['suggestion'])}[/dim]")
    if report["error_groups"]:
        render_table("error groups", ["count", "type", "tool", "kind", "example", "first seen"], [
            [g["count"], g["event_type"], g["tool_name"], g["kind"], g["example"][:80],
             g["first_seen"]] for g in report["error_groups"]], justify={"count": "right"})
    if report["tools"]:
        render_table("tools", ["tool", "calls", "failures", "fail %", "slow", "p50 ms", "p95 ms"], [
            [t["tool_name"], t["calls"], t["failures"], t["failure_rate_pct"], t["slow_calls"],
             t["p50_ms"], t["p95_ms"]] for t in report["tools"]],
            justify={h: "right" for h in ("calls", "failures", "fail %", "slow", "p50 ms", "p95 ms")})
    if report["baseline"]["note"]:
        out.print(f"[dim]{escape(report['baseline']['note'])}[/dim]")


@app.command("batch")
def batch_command(
    ctx: typer.Context,
    limit: int = int_option(service.BATCH_LIMIT, "--limit", help="Sessions to triage."),
    min_events: int = int_option(service.BATCH_MIN_EVENTS, "--min-events",
                                 help="Only sessions with at least this many events."),
    agent: str | None = typer.Option(None, "--agent", autocompletion=completion.agents, help="Only this agent's sessions."),
    since: str | None = typer.Option(None, "--since", callback=checked(incidents.check_since),
                                     help="Only sessions started since: an age before --until (24h, 7d) "
                                          "or an ISO 8601 time."),
    until: str | None = typer.Option(None, "--until", callback=checked(incidents.check_until),
                                     help="Only sessions started before this ISO 8601 time."),
    json_: JsonFlag = False,
) -> None:
    """Triage the most recent sessions and list them worst health score first.

    error_events of body_events (events other than session_start/session_end) and their
    error_event_rate describe each session's errors; the top finding is the one that set its
    severity.

    Example: obsctl triage batch --limit 20 --agent researcher
    Example: obsctl triage batch --since 2026-03-10T19:00:00Z --until 2026-03-10T22:00:00Z
    """
    data = run(ctx, service.triage_batch, pricer=_pricer(ctx), limit=limit, min_events=min_events,
               agent=agent, since=since, until=until)
    show(data, json_, lambda d: _show_batch(d, tty=True), plain=_show_batch)


def _show_batch(data: dict, tty: bool = False) -> None:
    # A terminal gets one compact "errors" column ("5 of 8 (62.5%)"); a pipe gets the
    # three numbers under their JSON names.
    counts = ["errors"] if tty else ["error_events", "body_events", "error_event_rate"]
    rows = []
    for r in data["reports"]:
        top = r["findings"][0]["title"] if r["findings"] else ""
        severity = Styled(r["severity"], SEVERITY_COLOURS.get(r["severity"], "white"))
        rows.append([r["health_score"], r["grade"], severity, r["session_id"], r["agent_name"],
                     *error_cells(r["metrics"], tty), top[:TOP_FINDING_CHARS] if tty else top])
    # The severity is the worst finding's: "top finding" is the one that set it.
    render_table(f"{len(rows)} of {plural(data['total'], 'session')}, worst first",
                 ["score", "grade", "severity", "session_id", "agent", *counts, "top finding"],
                 rows, justify={"score": "right", **{h: "right" for h in counts}})


def error_cells(counts: dict, tty: bool) -> list:
    """A session's error events as table cells: `5 of 8 (62.5%)` on a terminal, else the
    numbers error_events, body_events and error_event_rate."""
    if tty:
        return [f"{counts['error_events']:,} of {counts['body_events']:,} "
                f"({format_percent(counts['error_event_rate'])})"]
    return [counts["error_events"], counts["body_events"], counts["error_event_rate"]]
