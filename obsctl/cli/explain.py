"""`obsctl explain`: a session as Markdown (rendered on a terminal, raw when piped)."""

from __future__ import annotations

import sys

import typer

from obsctl.cli import completion
from obsctl.cli.base import run, translate_errors
from obsctl.cli.output import JsonFlag, console, show


@translate_errors
def explain_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., autocompletion=completion.sessions, help="Session id."),
    raw: bool = typer.Option(False, "--raw", help="Print the Markdown source even on a terminal."),
    json_: JsonFlag = False,
) -> None:
    """Explain a session as Markdown.

    Agent, status, duration, tokens, a numbered timeline of every event (inputs, outputs,
    reasoning, errors marked) and a summary per event type, model and tool.

    The Markdown is rendered on a terminal and printed as is when piped or with --raw.

    Example: obsctl explain sess-42 --raw > sess-42.md
    """
    from obsctl.services.sessions.explain import explain_session

    show(run(ctx, explain_session, session_id), json_, _print_source if raw else _render,
         plain=_print_source)


def _print_source(data: dict) -> None:
    sys.stdout.write(data["explanation"])
    sys.stdout.flush()


def _render(data: dict) -> None:
    from rich.markdown import Markdown

    console().print(Markdown(data["explanation"]))
