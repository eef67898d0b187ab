"""`obsctl sessions`: list sessions and show one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from obsctl.errors import InvalidInput
from obsctl.services import sessions as service
from obsctl.services.sessions import filters, housekeeping
from obsctl.services.sessions.fields import tool_parts
from obsctl.services.sessions.tree import root_note, walk
from obsctl.text import plural
from obsctl.vocabulary import child_error

app = ObsTyper(help="List, show, delete, tag and score sessions.\n\nExample: obsctl sessions list --status error")


def _check_tags(values: list[str]) -> list[str]:
    housekeeping.check_tag_filters(values)  # as typed: the service (or the server) reads them
    return values


def _checked(name: str) -> Callable[[Any], Any]:
    """A callback checking one filter option as the service does: a bad value is a usage error."""

    def check(value: Any) -> Any:
        filters.session_filter(**{name: value})
        return value

    return checked(check)


@app.command("list")
def list_command(
    ctx: typer.Context,
    agent: list[str] | None = typer.Option(None, "--agent", autocompletion=completion.agents,
                                           callback=_checked("agent"),
                                           help="Only this agent's sessions (repeat: any of them)."),
    status: str | None = typer.Option(None, "--status", autocompletion=completion.session_statuses, callback=checked(service.check_status),
                                      help="active, completed or error."),
    model: list[str] | None = typer.Option(None, "--model", callback=_checked("model"),
                                           help="Only sessions with an event of this model (repeat: any)."),
    tool: list[str] | None = typer.Option(None, "--tool", callback=_checked("tool"),
                                          help="Only sessions that called this tool (repeat: any)."),
    error_type: list[str] | None = typer.Option(
        None, "--error-type", autocompletion=completion.error_types, callback=_checked("error_type"),
        help="Only sessions with an error event of this type, e.g. timeout, rate_limit, tool_error (repeat: any)."),
    has_errors: bool = typer.Option(False, "--has-errors", help="Only sessions with at least one error event."),
    no_errors: bool = typer.Option(False, "--no-errors", help="Only sessions without error events."),
    since: str | None = typer.Option(None, "--since", callback=_checked("since"),
                                     help="Started at or after: an age (30m, 2h, 7d) or an ISO 8601 time."),
    from_: str | None = typer.Option(None, "--from", callback=_checked("from_"),
                                     help="Started at or after this ISO 8601 time (instead of --since)."),
    to: str | None = typer.Option(None, "--to", callback=_checked("to"),
                                  help="Started before this ISO 8601 time."),
    min_tokens: int | None = int_option(filters.RANGE_PARAMS["min_tokens"], "--min-tokens", default=None,
                                        show_default=False, help="At least this many tokens (in + out)."),
    max_tokens: int | None = int_option(filters.RANGE_PARAMS["max_tokens"], "--max-tokens", default=None,
                                        show_default=False, help="At most this many tokens (in + out)."),
    min_cost: str | None = typer.Option(None, "--min-cost", callback=_checked("min_cost"), metavar="USD",
                                        help="At least this cost in USD, e.g. 0.5 (unpriced sessions never match)."),
    max_cost: str | None = typer.Option(None, "--max-cost", callback=_checked("max_cost"), metavar="USD",
                                        help="At most this cost in USD (unpriced sessions never match)."),
    tag: list[str] | None = typer.Option(None, "--tag", callback=checked(_check_tags),
                                         help="key=value: only sessions with this tag (repeat: all of them)."),
    metadata: list[str] | None = typer.Option(None, "--metadata", callback=checked(filters.check_metadata_filters),
                                              help="key=value: only sessions whose metadata has this "
                                                   "value (repeat: all of them)."),
    sort: str = typer.Option(filters.DEFAULT_SORT, "--sort", autocompletion=completion.session_sorts,
                             callback=_checked("sort"),
                             help="start, duration, tokens, errors or cost; a leading - puts the largest "
                                  "(newest) first, e.g. --sort=-cost."),
    limit: int = int_option(service.LIMIT, "--limit", help="Sessions to show."),
    offset: int = int_option(service.OFFSET, "--offset", help="Sessions to skip (not with --cursor)."),
    cursor: str | None = typer.Option(None, "--cursor", help="Continue a list: the `next` of the previous page."),
    json_: JsonFlag = False,
) -> None:
    """List sessions, newest first, or as --sort says; every filter given must hold.

    The cost column is what each session cost (USD, computed at ingest; `+N unpriced` counts
    calls of models without a known price, which the cost leaves out).

    A page ends with the cursor of the next one: pass it as --cursor (with the same filters
    and sort) to go on; deep pages stay as fast as the first.

    Example: obsctl sessions list --agent support-bot --model gpt-4o --since 1d --has-errors --sort=-tokens
    Example: obsctl sessions list --min-cost 1 --sort=-cost
    """
    given: dict[str, Any] = {"agent": agent or None, "status": status, "model": model or None, "tool": tool or None,
             "error_type": error_type or None, "has_errors": _error_filter(has_errors, no_errors),
             "since": since, "from_": from_, "to": to, "min_tokens": min_tokens, "max_tokens": max_tokens,
             "min_cost": min_cost, "max_cost": max_cost, "tag": tag or None, "metadata": metadata or None, "sort": sort}
    try:  # what no single option shows (min above max, a cursor of another sort): exit 2 too
        selection = filters.session_filter(**given)
        filters.decode_cursor(selection, cursor)
        if cursor is not None and offset:
            raise InvalidInput("give --cursor or --offset, not both (the cursor says where the page starts)")
    except InvalidInput as exc:
        raise typer.BadParameter(exc.message) from None
    show(run(ctx, service.list_sessions, **given, limit=limit, offset=offset, cursor=cursor), json_, _show_list)


def _error_filter(has_errors: bool, no_errors: bool) -> bool | None:
    if has_errors and no_errors:
        raise typer.BadParameter("give one of them, not both", param_hint="'--has-errors' / '--no-errors'")
    return True if has_errors else False if no_errors else None


def _show_list(data: dict) -> None:
    rows = [
        [s["session_id"], s["agent_name"], _listed_status(s), s["started_at"], s["event_count"],
         s["error_count"], s["total_tokens_in"] + s["total_tokens_out"], cost_cell(s)]
        for s in data["sessions"]
    ]
    shown = len(rows)
    render_table(f"{shown} of {plural(data['total'], 'session')}",
                 ["session_id", "agent", "status", "started_at", "events", "errors", "tokens", "cost"], rows,
                 justify={"events": "right", "errors": "right", "tokens": "right", "cost": "right"})
    if data["next"] and output.stdout_is_tty():  # for a person; a script reads `next` from --json
        notice(f"more: --cursor {data['next']}")


def cost_cell(session: dict) -> str:
    """A session's cost for people: `$0.0250`, with `+N unpriced` when some calls had no price."""
    cost = fmt_usd(session["cost_usd"])
    unpriced = session["unpriced_calls"]
    return f"{cost} +{unpriced} unpriced" if unpriced else cost


def _listed_status(session: dict):
    """The status; for a person, with `background` after it for work outside any agent run (left
    out of triage batch). Piped output keeps the status alone: `--json` says `background`."""
    if session.get("background") and output.stdout_is_tty():
        return rich_cell([_status(session["status"]), Styled(" background", "dim")])
    return _status(session["status"])


def _status(status: str) -> Styled:
    return Styled(status, {"active": "cyan", "completed": "green", "error": "red"}.get(status, "white"))


@app.command("show")
def show_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., autocompletion=completion.sessions, help="Session id."),
    tree: bool = typer.Option(False, "--tree", help="Events as a span tree (parent_id) with self time; "
                                                    "--json nests them under `children`."),
    limit: int = int_option(service.EVENTS_LIMIT, "--limit", help="Events to show."),
    cursor: str | None = typer.Option(None, "--cursor", help="Continue: the `next` the previous page ended with."),
    json_: JsonFlag = False,
) -> None:
    """Show one session: its tags, scores and events.

    With --tree the events are nested under their parents (agent step -> LLM call -> tool
    call) with each one's duration and self time (its duration less its children's).

    A session of more events than --limit (at most 10,000) is shown a page at a time: the page
    ends with the cursor of the next one, which --cursor takes (`next` in --json).

    Example: obsctl sessions show sess-42 --tree
    """
    try:
        service.decode_event_cursor(cursor)
    except InvalidInput as exc:
        raise typer.BadParameter(exc.message, param_hint="'--cursor'") from None
    show(run(ctx, service.get_session, session_id, tree=tree, limit=limit, cursor=cursor), json_,
         _show_tree if tree else _show_session, json_when_piped=True)


def _more(data: dict) -> None:
    """Where the next page starts, after a page of a session's events."""
    if data["next"]:
        notice(f"more of its {plural(data['event_count'], 'event')}: --cursor {data['next']}")


def _token_parts(data: dict) -> str:
    """`; cache read 2000, cache write 1000, reasoning 16`, or nothing when there are none."""
    parts = [f"{label} {data[key]}" for key, label in (
        ("total_tokens_cache_read", "cache read"), ("total_tokens_cache_write", "cache write"),
        ("total_tokens_reasoning", "reasoning")) if data.get(key)]
    return f"; {', '.join(parts)}" if parts else ""


def _session_panel(data: dict) -> None:
    from rich.panel import Panel

    tokens = data["total_tokens_in"] + data["total_tokens_out"]
    header = rich_cell([
        Styled(data["session_id"], "bold"), "  agent ", Styled(data["agent_name"], "bold"), "  ",
        _status(data["status"]), Styled("  background work" if data.get("background") else "", "dim"),
        f"\nstarted {data['started_at']}  ended ", data["ended_at"] or MISSING,
        f"\ntokens {data['total_tokens_in']} in / {data['total_tokens_out']} out ({tokens}){_token_parts(data)}  "
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
    _more(data)


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
    _more(data)


def _node_pieces(node: dict, depth: int, ids: set[str]) -> list:
    name = node["event_type"]
    pieces: list = [Styled(name, "red" if node["is_error"] else "bold")]
    span_name = (node.get("metadata") or {}).get("span_name") if isinstance(node.get("metadata"), dict) else None
    tool = tool_parts(node["tool_call"])[0]
    if span_name and span_name not in (tool, node["model"]):
        pieces += ["  ", Styled(str(span_name), "dim")]
    if node["model"]:
        pieces += ["  ", Styled(node["model"], "cyan")]
    if tool:
        pieces += ["  ", Styled(str(tool), "magenta")]
    if node["duration_ms"] is not None:
        pieces.append(f"  {fmt_number(node['duration_ms'])} ms")
        if node["children"] and node["self_time_ms"] is not None:
            pieces.append(Styled(f"  (self {fmt_number(node['self_time_ms'])} ms)", "dim"))
    if not node["is_error"] and child_error(node.get("output_data")):
        pieces.append(Styled("  failed because a child failed", "yellow"))
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
