"""`obsctl sessions`: list sessions and show one."""

from __future__ import annotations

import typer

from obsctl.cli.base import ObsTyper, emit_json, open_readonly, render_table, stdout_is_tty
from obsctl.cli.options import checked, int_option
from obsctl.services import sessions as service
from obsctl.services.sessions.fields import tool_parts
from obsctl.text import plural

app = ObsTyper(help="List sessions and show one with its events.\n\nExample: obsctl sessions list --status error")


@app.command("list")
def list_command(
    ctx: typer.Context,
    status: str | None = typer.Option(None, "--status", callback=checked(service.check_status),
                                      help="active, completed or error."),
    limit: int = int_option(service.LIMIT, "--limit", help="Sessions to show."),
    offset: int = int_option(service.OFFSET, "--offset", help="Sessions to skip (newest first)."),
    json_: bool = typer.Option(False, "--json", help="Print the API's JSON body."),
) -> None:
    """List sessions, newest first.

    Example: obsctl sessions list --status error --limit 20
    """
    data = service.list_sessions(open_readonly(ctx), status=status, limit=limit, offset=offset)
    if json_:
        emit_json(data)
        return
    rows = [
        [s["session_id"], s["agent_name"], _status(s["status"]), s["started_at"], s["event_count"],
         s["error_count"], s["total_tokens_in"] + s["total_tokens_out"]]
        for s in data["sessions"]
    ]
    shown = len(rows)
    render_table(f"{shown} of {plural(data['total'], 'session')}",
                 ["session_id", "agent", "status", "started_at", "events", "errors", "tokens"], rows,
                 justify={"events": "right", "errors": "right", "tokens": "right"})


def _status(status: str) -> str:
    if not stdout_is_tty():
        return status
    colour = {"active": "cyan", "completed": "green", "error": "red"}.get(status, "white")
    return f"[{colour}]{status}[/{colour}]"


@app.command("show")
def show_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., help="Session id."),
    json_: bool = typer.Option(False, "--json", help="Print the API's JSON body."),
) -> None:
    """Show one session and its events.

    Example: obsctl sessions show sess-42 --json
    """
    data = service.get_session(open_readonly(ctx), session_id)
    if json_ or not stdout_is_tty():
        emit_json(data)
        return
    from rich.panel import Panel

    from obsctl.cli.base import console

    tokens = data["total_tokens_in"] + data["total_tokens_out"]
    header = (
        f"[bold]{data['session_id']}[/bold]  agent [bold]{data['agent_name']}[/bold]  "
        f"{_status(data['status'])}\nstarted {data['started_at']}  ended {data['ended_at'] or '-'}\n"
        f"tokens {data['total_tokens_in']} in / {data['total_tokens_out']} out ({tokens})  "
        f"events {data['event_count']}  errors {data['error_count']}"
    )
    console().print(Panel(header, title="session", expand=False))
    rows = []
    for e in data["events"]:
        tool = tool_parts(e["tool_call"])[0]
        rows.append([
            e["timestamp"], ("[red]" + e["event_type"] + "[/red]") if e["is_error"] else e["event_type"],
            e["model"] or "", tool or "", e["tokens_in"], e["tokens_out"], e["duration_ms"],
        ])
    render_table(None, ["timestamp", "type", "model", "tool", "in", "out", "ms"], rows,
                 justify={"in": "right", "out": "right", "ms": "right"})
