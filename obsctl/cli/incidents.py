"""`obsctl incidents`: the same failure across sessions, grouped (services/incidents.py)."""

from __future__ import annotations

import typer

from obsctl.cli import completion
from obsctl.cli.base import run, translate_errors
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import JsonFlag, Styled, render_table, show
from obsctl.services import incidents as service

_SEVERITY_COLOURS = {"SEV-1": "bold red", "SEV-2": "red", "SEV-3": "yellow"}


@translate_errors
def incidents_command(
    ctx: typer.Context,
    since: str = typer.Option(service.DEFAULT_SINCE, "--since", callback=checked(service.check_since),
                              help="Start of the window: an age before --until (30m, 24h, 7d, 2w) "
                                   "or an ISO 8601 time."),
    until: str | None = typer.Option(None, "--until", callback=checked(service.check_until), help="End of the window, ISO 8601 (default: now)."),
    agent: str | None = typer.Option(None, "--agent", autocompletion=completion.agents, help="Only this agent's failures."),
    min_sessions: int = int_option(service.MIN_SESSIONS, "--min-sessions",
                                   help="Sessions a failure must reach to be an incident."),
    gap_minutes: int = int_option(service.GAP_MINUTES, "--gap-minutes",
                                  help="A pause this long ends an incident; the failure returning later "
                                       "is a new one."),
    limit: int = int_option(service.LIMIT, "--limit", help="Incidents to show."),
    json_: JsonFlag = False,
) -> None:
    """List incidents: the same failure (error fingerprint, tool and model) in several sessions
    within a window, most severe first (SEV-1: 3+ agents or 10+ sessions; SEV-2: 2 agents or
    3+ sessions; SEV-3: the rest).

    Example: obsctl incidents --since 6h
    """
    data = run(ctx, service.list_incidents, since=since, until=until, agent=agent,
               min_sessions=min_sessions, gap_minutes=gap_minutes, limit=limit)
    show(data, json_, _show)


def _show(data: dict) -> None:
    rows = [[Styled(i["severity"], _SEVERITY_COLOURS[i["severity"]]), i["title"], i["incident_id"]]
            for i in data["incidents"]]
    shown = len(data["incidents"])
    what = f"{shown} of {data['total']}" if shown < data["total"] else f"{data['total']}"
    render_table(f"{what} incident{'s' if data['total'] != 1 else ''}, {data['since']} to {data['until']}"
                 + (" (truncated: too many errors in the window)" if data["truncated"] else ""),
                 ["severity", "incident", "id"], rows)
