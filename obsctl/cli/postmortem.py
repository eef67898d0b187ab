"""`obsctl postmortem`: the postmortem of one session (`obsctl postmortem ID`) and the
sessions worth one (`candidates`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from obsctl.cli import completion
from obsctl.cli.base import ObsTyper, notice, run, settings_of
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import JsonFlag, Styled, console, render_table, show
from obsctl.cli.triage import DefaultCommandGroup, error_cells
from obsctl.errors import InvalidInput
from obsctl.services import postmortem as service
from obsctl.services.incidents import FIND_SINCE, GAP_MINUTES, check_since, check_until
from obsctl.text import plural

SEV_COLOURS = {"SEV-1": "bold red", "SEV-2": "red", "SEV-3": "yellow", "SEV-4": "cyan", "none": "green"}

app = ObsTyper(
    cls=DefaultCommandGroup,
    help="Postmortem reports: timeline, error cascade, costs, tools, contributing factors.\n\n"
         "`obsctl postmortem ID` is short for `obsctl postmortem show ID`.\n\n"
         "Example: obsctl postmortem sess-42 -o sess-42-postmortem.md",
)


class ReportFormat(StrEnum):
    md = "md"
    json = "json"


@app.command("show")
def show_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., autocompletion=completion.sessions, help="Session id."),
    format_: Annotated[ReportFormat, typer.Option(
        "--format", "-f", help="md (Markdown) or json (the API's JSON body; same as --json)."
    )] = ReportFormat.md,
    json_: JsonFlag = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", dir_okay=False, help="Write the report to this file instead of stdout.")] = None,
) -> None:
    """Generate the postmortem of one session.

    Markdown is rendered on a terminal and printed as is when piped; -o writes a file.

    Example: obsctl postmortem show sess-42 --format json -o sess-42.json
    """
    from obsctl.services.pricing import pricer_for

    report = run(ctx, service.postmortem_session, session_id, pricer=pricer_for(settings_of(ctx)))
    _write_or_show(report, json_ or format_ is ReportFormat.json, output, session_id)


@app.command("incident")
def incident_command(
    ctx: typer.Context,
    incident_id: str = typer.Argument(..., help="Incident id (inc-...), as `obsctl incidents` lists it."),
    since: str = typer.Option(FIND_SINCE, "--since", callback=checked(check_since),
                              help="A window holding the incident's start: an age before --until or an "
                                   "ISO 8601 time."),
    until: str | None = typer.Option(None, "--until", callback=checked(check_until),
                                     help="End of the window, ISO 8601 (default: now)."),
    gap_minutes: int = int_option(GAP_MINUTES, "--gap-minutes",
                                  help="The gap the incident was listed with (obsctl incidents --gap-minutes)."),
    format_: Annotated[ReportFormat, typer.Option(
        "--format", "-f", help="md (Markdown) or json (the API's JSON body; same as --json)."
    )] = ReportFormat.md,
    json_: JsonFlag = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", dir_okay=False, help="Write the report to this file instead of stdout.")] = None,
) -> None:
    """Generate the postmortem of an incident: the same failure across sessions, with the
    sessions it hit, its timeline, its cause and what overlapped it.

    Example: obsctl postmortem incident inc-1a2b3c4d5e6f --since 3d -o outage.md
    """
    from obsctl.services.pricing import pricer_for

    report = run(ctx, service.postmortem_incident, incident_id, pricer=pricer_for(settings_of(ctx)),
                 since=since, until=until, gap_minutes=gap_minutes)
    _write_or_show(report, json_ or format_ is ReportFormat.json, output, f"incident {incident_id}")


def _write_or_show(report: dict, as_json: bool, output: Path | None, what: str) -> None:
    if output is not None:
        import orjson

        data = (orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n" if as_json
                else report["markdown"].encode())
        try:
            output.write_bytes(data)
        except OSError as exc:
            raise InvalidInput(f"cannot write {output}: {exc.strerror or exc}") from None
        notice(f"wrote the {report['severity']} postmortem of {what} to {output}")
        return
    show(report, as_json, _render_markdown, plain=lambda r: typer.echo(r["markdown"], nl=False))


def _render_markdown(report: dict) -> None:
    from rich.markdown import Markdown

    console().print(Markdown(report["markdown"]))


@app.command("candidates")
def candidates_command(
    ctx: typer.Context,
    min_errors: int = int_option(service.CANDIDATES_MIN_ERRORS, "--min-errors",
                                 help="Only sessions with at least this many errors."),
    limit: int = int_option(service.CANDIDATES_LIMIT, "--limit", help="Candidates to show."),
    agent: str | None = typer.Option(None, "--agent", autocompletion=completion.agents, help="Only this agent's sessions."),
    days: int | None = int_option(service.CANDIDATES_DAYS, "--days",
                                  show_default="all", help="Only sessions started in the last N days"),
    json_: JsonFlag = False,
) -> None:
    """List sessions worth a postmortem: most severe first, then most errors.

    Errors are counted over the body events (all but session_start/session_end):
    error_rate, also named error_event_rate, is error_events / body_events in percent, the
    same number triage and the postmortem show for the session.

    Example: obsctl postmortem candidates --min-errors 3 --days 7
    """
    data = run(ctx, service.postmortem_candidates, min_errors=min_errors, limit=limit, agent=agent,
               days=days)
    show(data, json_, lambda d: _show_candidates(d, tty=True), plain=_show_candidates)


def _show_candidates(data: dict, tty: bool = False) -> None:
    rows = [[Styled(c["severity"], SEV_COLOURS[c["severity"]]), c["session_id"], c["agent_name"],
             c["status"], c["started_at"], *error_cells(c, tty)] for c in data["candidates"]]
    counts = ["errors"] if tty else ["error_events", "body_events", "error_event_rate"]
    render_table(f"{len(rows)} of {plural(data['total'], 'session')} with errors",
                 ["severity", "session_id", "agent", "status", "started_at", *counts], rows,
                 justify={h: "right" for h in counts})
