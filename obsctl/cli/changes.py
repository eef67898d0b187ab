"""`obsctl changes`: changes of agents' configurations (model, release) and what they did
(services/changes.py); `obsctl changes ack ID` makes a change the agent's baseline."""

from __future__ import annotations

import typer

from obsctl.cli import completion
from obsctl.cli.base import ObsTyper, run, settings_of, translate_errors
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import JsonFlag, Styled, render_table, show
from obsctl.services import changes as service
from obsctl.services.windows import check_since, check_until

app = ObsTyper(no_args_is_help=False)

_STATUS_COLOURS = {"regression": "bold red", "improvement": "green", "neutral": "white"}


def _pricer(ctx: typer.Context):
    from obsctl.services.pricing import pricer_for

    return pricer_for(settings_of(ctx))


@app.callback(invoke_without_command=True)
@translate_errors
def changes_command(
    ctx: typer.Context,
    since: str = typer.Option(service.DEFAULT_SINCE, "--since", callback=checked(check_since),
                              help="Start of the window: an age before --until (30m, 24h, 7d, 2w) "
                                   "or an ISO 8601 time."),
    until: str | None = typer.Option(None, "--until", callback=checked(check_until),
                                     help="End of the window, ISO 8601 (default: now)."),
    agent: str | None = typer.Option(None, "--agent", autocompletion=completion.agents, help="Only this agent's changes."),
    limit: int = int_option(service.LIMIT, "--limit", help="Changes to show."),
    json_: JsonFlag = False,
) -> None:
    """List changes of agents' configurations (the model doing most of the work, the release
    in the session metadata) that started in the window, with LLM latency, cost per session
    and error rate before and after; unacknowledged regressions first.

    Example: obsctl changes --since 14d --agent research-agent
    """
    if ctx.invoked_subcommand is not None:
        return
    data = run(ctx, service.list_changes, pricer=_pricer(ctx), since=since, until=until,
               agent=agent, limit=limit)
    show(data, json_, _show)


def _status(change: dict) -> Styled:
    text = change["status"]
    if change["status"] == "regression":
        text += ", acknowledged" if change["acknowledged"] else ", not acknowledged"
    if change["provisional"]:
        text += " (provisional)"
    return Styled(text, "white" if change["acknowledged"] else _STATUS_COLOURS[change["status"]])


def _show(data: dict) -> None:
    rows = [[c["changed_at"], c["agent_name"], _status(c), c["title"], c["change_id"]]
            for c in data["changes"]]
    shown = len(data["changes"])
    what = f"{shown} of {data['total']}" if shown < data["total"] else f"{data['total']}"
    render_table(f"{what} change{'s' if data['total'] != 1 else ''}, {data['since']} to {data['until']}",
                 ["changed_at", "agent", "status", "change", "id"], rows)


@app.command("ack")
@translate_errors
def ack_command(
    ctx: typer.Context,
    change_id: str = typer.Argument(..., help="AGENT@CHANGED_AT, as `obsctl changes` lists it."),
    note: str | None = typer.Option(None, "--note", help="Why the change is accepted (500 characters)."),
    json_: JsonFlag = False,
) -> None:
    """Acknowledge a change: triage stops judging the new configuration's sessions against the
    sessions before it, and the scorecard stops counting it (again is fine: the first
    acknowledgement is kept).

    Example: obsctl changes ack 'research-agent@2026-11-20T14:00:00.000Z' --note "opus on purpose"
    """
    change = run(ctx, service.acknowledge_change, change_id, pricer=_pricer(ctx), note=note,
                 opening="existing")
    show(change, json_, lambda c: render_table("acknowledged", ["changed_at", "agent", "status", "change", "id"],
                                               [[c["changed_at"], c["agent_name"], _status(c), c["title"],
                                                 c["change_id"]]]))
