"""`obsctl sessions`: list sessions and show one."""

from __future__ import annotations

import typer

from obsctl.cli import completion
from obsctl.cli.base import ObsTyper, run
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import MISSING, JsonFlag, Styled, console, render_table, rich_cell, show
from obsctl.services import sessions as service
from obsctl.services.sessions.fields import tool_parts
from obsctl.text import plural

app = ObsTyper(help="List sessions and show one with its events.\n\nExample: obsctl sessions list --status error")


@app.command("list")
def list_command(
    ctx: typer.Context,
    status: str | None = typer.Option(None, "--status", autocompletion=completion.session_statuses, callback=checked(service.check_status),
                                      help="active, completed or error."),
    limit: int = int_option(service.LIMIT, "--limit", help="Sessions to show."),
    offset: int = int_option(service.OFFSET, "--offset", help="Sessions to skip (newest first)."),
    json_: JsonFlag = False,
) -> None:
    """List sessions, newest first.

    Example: obsctl sessions list --status error --limit 20
    """
    show(run(ctx, service.list_sessions, status=status, limit=limit, offset=offset), json_,
         _show_list)


def _show_list(data: dict) -> None:
    rows = [
        [s["session_id"], s["agent_name"], _status(s["status"]), s["started_at"], s["event_count"],
         s["error_count"], s["total_tokens_in"] + s["total_tokens_out"]]
        for s in data["sessions"]
    ]
    shown = len(rows)
    render_table(f"{shown} of {plural(data['total'], 'session')}",
                 ["session_id", "agent", "status", "started_at", "events", "errors", "tokens"], rows,
                 justify={"events": "right", "errors": "right", "tokens": "right"})


def _status(status: str) -> Styled:
    return Styled(status, {"active": "cyan", "completed": "green", "error": "red"}.get(status, "white"))


@app.command("show")
def show_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., autocompletion=completion.sessions, help="Session id."),
    json_: JsonFlag = False,
) -> None:
    """Show one session and its events.

    Example: obsctl sessions show sess-42 --json
    """
    show(run(ctx, service.get_session, session_id), json_, _show_session, json_when_piped=True)


def _show_session(data: dict) -> None:
    from rich.panel import Panel

    tokens = data["total_tokens_in"] + data["total_tokens_out"]
    header = rich_cell([
        Styled(data["session_id"], "bold"), "  agent ", Styled(data["agent_name"], "bold"), "  ",
        _status(data["status"]), f"\nstarted {data['started_at']}  ended ", data["ended_at"] or MISSING,
        f"\ntokens {data['total_tokens_in']} in / {data['total_tokens_out']} out ({tokens})  "
        f"events {data['event_count']}  errors {data['error_count']}",
    ])
    console().print(Panel(header, title="session", expand=False))
    rows = []
    for e in data["events"]:
        tool = tool_parts(e["tool_call"])[0]
        rows.append([
            e["timestamp"], Styled(e["event_type"], "red") if e["is_error"] else e["event_type"],
            e["model"], tool, e["tokens_in"], e["tokens_out"], e["duration_ms"],
        ])
    render_table(None, ["timestamp", "type", "model", "tool", "in", "out", "ms"], rows,
                 justify={"in": "right", "out": "right", "ms": "right"})
