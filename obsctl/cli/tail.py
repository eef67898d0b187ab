"""`obsctl tail`: events as they are stored, like `tail -f` (services/sessions/follow.py)."""

from __future__ import annotations

import sys

import orjson
import typer

from obsctl.cli.base import run, translate_errors
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import JsonFlag, stdout_is_tty
from obsctl.services.sessions.follow import LINES
from obsctl.text import visible_text

# Shells report a command ended by Ctrl-C (SIGINT) with 128 + 2.
EXIT_INTERRUPTED = 130


def _check_statuses(values: list[str]) -> list[str]:
    from obsctl.services.sessions.bulk_export import select_events

    select_events(statuses=values)
    return values


@translate_errors
def tail_command(
    ctx: typer.Context,
    agents: list[str] | None = typer.Option(None, "--agent", metavar="<str>",
                                            help="Events of this agent's sessions (repeatable)."),
    sessions: list[str] | None = typer.Option(None, "--session", metavar="<str>",
                                              help="Events of this session (repeatable)."),
    event_types: list[str] | None = typer.Option(None, "--event-type", "--type", metavar="<str>",
                                                 help="Events of this type (repeatable); --type is the older name."),
    statuses: list[str] | None = typer.Option(None, "--status", metavar="<str>", callback=checked(_check_statuses),
                                              help="Events of sessions with this status: active, "
                                                   "completed or error (repeatable)."),
    lines: int = int_option(LINES, "--lines", "-n", help="Events stored last to print first"),
    follow: bool = typer.Option(True, "--follow/--no-follow",
                                help="Keep printing new events (the default), or stop after the first ones."),
    json_: JsonFlag = False,
) -> None:
    """Print events as they are stored, like tail -f: the last --lines events first, then
    each new one (in the order they were stored, whatever their timestamps), until Ctrl-C,
    which exits with code 130.

    A line shows the time, session, agent, event type and what the event did; with --json,
    one JSON object a line (the event stream's messages: position, the session's agent_name
    and the event as `obsctl ingest` takes it). Locally the database is read once a second
    (an indexed read of what is new); with --url the server streams (GET /events/stream).

    Example: obsctl tail --agent support-bot --event-type tool_call -n 20
    """
    from obsctl.services.sessions.bulk_export import select_events
    from obsctl.services.sessions.follow import follow_events

    selection = select_events(agents=agents or (), session_ids=sessions or (),
                              event_types=event_types or (), statuses=statuses or ())
    out = sys.stdout.buffer
    write = _json_line if json_ else _text_line(stdout_is_tty())
    events = None
    try:
        events = run(ctx, follow_events, selection, lines=lines, follow=follow)
        for feed in events:
            out.write(write(feed))
            out.flush()
    except KeyboardInterrupt:
        if events is not None:
            events.close()
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _json_line(feed) -> bytes:
    return orjson.dumps(feed.as_dict()) + b"\n"


def _text_line(terminal: bool):
    separator = "  " if terminal else "\t"

    def line(feed) -> bytes:
        e = feed.event
        fields = [e["timestamp"], e["session_id"], feed.agent_name, e["event_type"], _detail(e)]
        text = separator.join(visible_text(str(f).translate(_ESCAPES)) for f in fields).rstrip()
        return (text + "\n").encode()

    return line


_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _detail(e: dict) -> str:
    """What the event did, briefly: model and tokens, tool, duration, a session's end."""
    parts = []
    if e.get("model"):
        parts.append(e["model"])
    if e.get("tokens_in") is not None or e.get("tokens_out") is not None:
        parts.append(f"{e.get('tokens_in') or 0}/{e.get('tokens_out') or 0} tokens")
    tool = e.get("tool_call")
    if isinstance(tool, dict):
        name = tool.get("name", tool.get("tool_name"))
        if name is not None:
            parts.append(f"tool {name}")
    if e.get("duration_ms") is not None:
        parts.append(f"{e['duration_ms']:g} ms")
    if e.get("status"):
        parts.append(e["status"])
    return " ".join(parts)
