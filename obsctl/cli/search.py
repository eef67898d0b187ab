"""`obsctl search QUERY`: full-text search over what events said (services/search.py)."""

from __future__ import annotations

import typer

from obsctl.cli import completion
from obsctl.cli.base import run
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import JsonFlag, Styled, render_table, show
from obsctl.services import search as service
from obsctl.services.windows import check_since, check_until

# Asked of the service for the terminal and pipes: never in the text, turned into bold.
_START, _END = "\x02", "\x03"


def search_command(
    ctx: typer.Context,
    query: str = typer.Argument(..., metavar="QUERY", callback=checked(service.check_query),
                                help='Words (all must appear), "a phrase", prefix*; e.g. \'"HTTP 503" timeout\'.'),
    agents: list[str] | None = typer.Option(None, "--agent", metavar="<str>", autocompletion=completion.agents,
                                            help="Sessions of this agent (repeatable)."),
    since: str | None = typer.Option(None, "--since", callback=checked(check_since),
                                     help="Events from this time: an age before --until (30m, 24h, 1d, 2w) "
                                          "or an ISO 8601 time."),
    until: str | None = typer.Option(None, "--until", callback=checked(check_until),
                                     help="Events before this time, ISO 8601 (default: no end)."),
    session: str | None = typer.Option(None, "--session", autocompletion=completion.sessions,
                                       help="Only this session's events."),
    event_type: str | None = typer.Option(None, "--event-type", "--type",
                                          help="Only events of this type (llm_call, tool_call, ...); --type is the older name."),
    sort: str = typer.Option("time", "--sort", callback=checked(service.check_sort),
                             help="time: newest first; rank: best match first (bm25 / ts_rank)."),
    limit: int = int_option(service.LIMIT, "--limit", help="Events to show"),
    mark_start: str = typer.Option("[", "--mark-start", show_default=False,
                                   help='Text before matched words in --json and piped output (default "[").'),
    mark_end: str = typer.Option("]", "--mark-end", show_default=False,
                                 help='Text after matched words in --json and piped output (default "]").'),
    json_: JsonFlag = False,
) -> None:
    """Search event inputs, outputs, tool calls (with their errors) and reasoning; newest
    first, with a snippet of the field that matched (matched words in bold on a terminal).

    Example: obsctl search "timeout" --agent research-agent --since 1d
    """
    data = run(ctx, service.search_events, query, agent=agents or None, since=since, until=until,
               session=session, event_type=event_type, sort=sort, limit=limit,
               mark_start=mark_start if json_ else _START, mark_end=mark_end if json_ else _END)
    if not json_:
        # Split here, before `show` makes the terminal's copy visible (the marks are controls).
        data = {**data, "results": [{**r, "snippet": _pieces(r["snippet"])} for r in data["results"]]}
    show(data, json_, _render, plain=lambda d: _plain(d, mark_start, mark_end))


def _pieces(snippet: str | None) -> list | None:
    """The snippet as text pieces, the matched words bold."""
    if snippet is None:
        return None
    pieces: list = []
    for n, part in enumerate(snippet.split(_START)):
        if n == 0:
            pieces.append(part)
            continue
        matched, _, rest = part.partition(_END)
        pieces += [Styled(matched, "bold"), rest]
    return [p for p in pieces if p]


def _rows(data: dict, snippet=lambda pieces: pieces) -> list[list]:
    return [[r["timestamp"], r["session_id"], r["agent_name"], r["event_type"], r["event_id"], r["field"],
             snippet(r["snippet"])] for r in data["results"]]


_HEADERS = ["timestamp", "session", "agent", "type", "event", "field", "snippet"]


def _render(data: dict) -> None:
    more = ", more match: raise --limit or narrow the search" if data["more"] else ""
    title = f"{data['count']} event{'s' if data['count'] != 1 else ''} matching {data['query']!r}{more}"
    render_table(title, _HEADERS, _rows(data))


def _plain(data: dict, start: str, end: str) -> None:
    def marked(pieces: list | None) -> str | None:
        if pieces is None:
            return None
        return "".join(f"{start}{p.text}{end}" if isinstance(p, Styled) else p for p in pieces)

    render_table(None, _HEADERS, _rows(data, marked))
