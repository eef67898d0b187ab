"""`obsctl sessions`: list sessions and show one."""

from __future__ import annotations

import typer

from obsctl.cli import completion, output
from obsctl.cli.base import EXIT_USAGE, ObsTyper, error, notice, run
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import (
    MISSING,
    JsonFlag,
    Styled,
    console,
    fmt_number,
    fmt_usd,
    render_table,
    rich_cell,
    show,
)
from obsctl.services import sessions as service
from obsctl.services.sessions import housekeeping
from obsctl.services.sessions.fields import tool_parts
from obsctl.services.sessions.tree import root_note, walk
from obsctl.text import plural

app = ObsTyper(help="List, show, delete, tag and score sessions.\n\nExample: obsctl sessions list --status error")


def _check_tags(values: list[str]) -> list[str]:
    housekeeping.check_tag_filters(values)  # as typed: the service (or the server) reads them
    return values


@app.command("list")
def list_command(
    ctx: typer.Context,
    status: str | None = typer.Option(None, "--status", autocompletion=completion.session_statuses, callback=checked(service.check_status),
                                      help="active, completed or error."),
    limit: int = int_option(service.LIMIT, "--limit", help="Sessions to show."),
    offset: int = int_option(service.OFFSET, "--offset", help="Sessions to skip (newest first)."),
    tag: list[str] | None = typer.Option(None, "--tag", callback=checked(_check_tags),
                                         help="key=value: only sessions with this tag (repeat: all of them)."),
    json_: JsonFlag = False,
) -> None:
    """List sessions, newest first, with what each cost (USD, computed at ingest; `+N unpriced`
    counts calls of models without a known price, which the cost leaves out).

    Example: obsctl sessions list --status error --tag team=support --limit 20
    """
    show(run(ctx, service.list_sessions, status=status, limit=limit, offset=offset, tag=tag or None),
         json_, _show_list)


def _show_list(data: dict) -> None:
    rows = [
        [s["session_id"], s["agent_name"], _status(s["status"]), s["started_at"], s["event_count"],
         s["error_count"], s["total_tokens_in"] + s["total_tokens_out"], cost_cell(s)]
        for s in data["sessions"]
    ]
    shown = len(rows)
    render_table(f"{shown} of {plural(data['total'], 'session')}",
                 ["session_id", "agent", "status", "started_at", "events", "errors", "tokens", "cost"], rows,
                 justify={"events": "right", "errors": "right", "tokens": "right", "cost": "right"})


def cost_cell(session: dict) -> str:
    """A session's cost for people: `$0.0250`, with `+N unpriced` when some calls had no price."""
    cost = fmt_usd(session["cost_usd"])
    unpriced = session["unpriced_calls"]
    return f"{cost} +{unpriced} unpriced" if unpriced else cost


def _status(status: str) -> Styled:
    return Styled(status, {"active": "cyan", "completed": "green", "error": "red"}.get(status, "white"))


@app.command("show")
def show_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., autocompletion=completion.sessions, help="Session id."),
    tree: bool = typer.Option(False, "--tree", help="Events as a span tree (parent_id) with self time; "
                                                    "--json nests them under `children`."),
    json_: JsonFlag = False,
) -> None:
    """Show one session: its tags, scores and events.

    With --tree the events are nested under their parents (agent step -> LLM call -> tool
    call) with each one's duration and self time (its duration less its children's).

    Example: obsctl sessions show sess-42 --tree
    """
    show(run(ctx, service.get_session, session_id, tree=tree), json_,
         _show_tree if tree else _show_session, json_when_piped=True)


def _session_panel(data: dict) -> None:
    from rich.panel import Panel

    tokens = data["total_tokens_in"] + data["total_tokens_out"]
    header = rich_cell([
        Styled(data["session_id"], "bold"), "  agent ", Styled(data["agent_name"], "bold"), "  ",
        _status(data["status"]), f"\nstarted {data['started_at']}  ended ", data["ended_at"] or MISSING,
        f"\ntokens {data['total_tokens_in']} in / {data['total_tokens_out']} out ({tokens})  "
        f"events {data['event_count']}  errors {data['error_count']}  cost {cost_cell(data)}",
    ])
    console().print(Panel(header, title="session", expand=False))
    if data["tags"]:
        console().print(rich_cell(["tags  ", *_tag_pieces(data["tags"])]))
    if data["scores"]:
        render_table("scores", ["name", "value", "comment", "created_at"],
                     [[s["name"], s["value"], s["comment"], s["created_at"]] for s in data["scores"]],
                     justify={"value": "right"})


def _tag_pieces(tags: dict) -> list:
    pieces: list = []
    for key, value in tags.items():
        if pieces:
            pieces.append("  ")
        pieces += [Styled(key, "bold"), f"={value}"]
    return pieces


def _show_session(data: dict) -> None:
    _session_panel(data)
    rows = []
    for e in data["events"]:
        tool = tool_parts(e["tool_call"])[0]
        rows.append([
            e["timestamp"], Styled(e["event_type"], "red") if e["is_error"] else e["event_type"],
            e["model"], tool, e["tokens_in"], e["tokens_out"], e["duration_ms"], fmt_usd(e["cost_usd"]),
        ])
    render_table(None, ["timestamp", "type", "model", "tool", "in", "out", "ms", "cost"], rows,
                 justify={"in": "right", "out": "right", "ms": "right", "cost": "right"})


def _show_tree(data: dict) -> None:
    """The session, then its events as a tree: type, model or tool, duration, self time."""
    from rich.text import Text
    from rich.tree import Tree

    _session_panel(data)
    ids = {node["event_id"] for _, node in walk(data["events"])}
    top = Tree(Text(f"{plural(data['event_count'], 'event')}"), guide_style="dim")
    branches: list = [top]
    for depth, node in walk(data["events"]):
        del branches[depth + 1:]
        branch = branches[depth].add(rich_cell(_node_pieces(node, depth, ids)))
        branches.append(branch)
    console().print(top)


def _node_pieces(node: dict, depth: int, ids: set[str]) -> list:
    name = node["event_type"]
    pieces: list = [Styled(name, "red" if node["is_error"] else "bold")]
    tool = tool_parts(node["tool_call"])[0]
    if node["model"]:
        pieces += ["  ", Styled(node["model"], "cyan")]
    if tool:
        pieces += ["  ", Styled(str(tool), "magenta")]
    if node["duration_ms"] is not None:
        pieces.append(f"  {fmt_number(node['duration_ms'])} ms")
        if node["children"] and node["self_time_ms"] is not None:
            pieces.append(Styled(f"  (self {fmt_number(node['self_time_ms'])} ms)", "dim"))
    note = root_note(node, ids) if depth == 0 else None
    if note:
        pieces.append(Styled(f"  {note}", "yellow"))
    return pieces


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., help="Session id."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation (for scripts)."),
    json_: JsonFlag = False,
) -> None:
    """Delete a session with its events, tags and scores.

    Analytics afterwards are those of a database that never had the session. On a terminal
    this asks first; elsewhere (a script, a pipe) --yes is required.

    Example: obsctl sessions delete sess-42 --yes
    """
    if not yes:
        if not output.stdin_is_tty():
            error(f"deleting session {session_id!r} needs confirmation: pass --yes (no terminal to ask on)")
            raise typer.Exit(EXIT_USAGE)
        if not typer.confirm(f"Delete session {session_id!r} with its events, tags and scores?", err=True):
            notice("nothing deleted")
            raise typer.Exit(1)
    data = run(ctx, housekeeping.delete_session, session_id, opening="existing")
    show(data, json_, lambda d: notice(f"deleted session {session_id} and its "
                                       f"{plural(d['events_deleted'], 'event')}"))


@app.command("tag")
def tag_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., help="Session id."),
    pairs: list[str] | None = typer.Argument(None, help="key=value sets a tag; key= removes it."),
    remove: list[str] | None = typer.Option(None, "--remove", help="A tag key to remove (repeatable)."),
    json_: JsonFlag = False,
) -> None:
    """Set or remove tags on a session, then print its tags.

    Keys are letters, digits, _ . - (at most 64); values 1-256 characters.

    Example: obsctl sessions tag sess-42 team=support tier=gold --remove draft
    """
    changes: dict[str, str | None] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"{pair!r} is not key=value (key= removes a tag)", param_hint="PAIRS")
        changes[key] = value or None
    for key in remove or []:
        changes[key] = None
    if not changes:
        raise typer.BadParameter("give key=value pairs to set, or --remove KEY", param_hint="PAIRS")
    show(run(ctx, housekeeping.tag_session, session_id, changes, opening="existing"), json_, _show_tags)


def _show_tags(data: dict) -> None:
    render_table(f"tags of {data['session_id']}", ["key", "value"], [[k, v] for k, v in data["tags"].items()])


@app.command("score")
def score_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., help="Session id."),
    name: str = typer.Argument(..., help="Score name (letters, digits, _ . -), e.g. helpfulness."),
    value: float = typer.Argument(..., help="The score, any finite number (a negative one after --)."),
    comment: str | None = typer.Option(None, "--comment", help="Why, in words."),
    json_: JsonFlag = False,
) -> None:
    """Score a session (feedback): a name, a number and an optional comment.

    Scores show in `sessions show` and `explain`; alert rules and SLA targets can watch
    their average with the metric avg_score:NAME. A negative value goes after `--`
    (obsctl sessions score sess-42 accuracy -- -0.5).

    Example: obsctl sessions score sess-42 helpfulness 0.8 --comment "solved on first try"
    """
    body = {"name": name, "value": value, "comment": comment}
    show(run(ctx, housekeeping.score_session, session_id, body, opening="existing"), json_,
         lambda d: render_table(None, ["score_id", "session_id", "name", "value", "comment", "created_at"],
                                [[d["score_id"], d["session_id"], d["name"], d["value"], d["comment"],
                                  d["created_at"]]], justify={"value": "right"}))
