"""The ``printq`` entry point.

``printq METRIC COMPARISON VALUE [--data PATH]`` is the hot path: it is parsed here by hand and
answered without importing typer, rich or flask, so a query starts in a few tens of milliseconds.
Everything else (``metrics``, ``serve``, ``--help``, ``--version``, usage errors) goes to the Typer
app in ``printq.commands``, which documents the query form as its ``query`` command.
"""

from __future__ import annotations

import sys

from printq.answer import run_query_command

SUBCOMMANDS = ("query", "metrics", "serve")


def _is_number(token: str) -> bool:
    from printq.queries import parse_number

    return parse_number(token) is not None


def parse_fast_query(args: list[str]) -> tuple[str, str, str, str | None] | None:
    """``(metric, comparison, value, data)`` for the plain query form, else None (let Typer handle it)."""
    positionals: list[str] = []
    data = None
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            positionals.extend(args[i + 1:])
            break
        if token == "--data" and i + 1 < len(args):
            data = args[i + 1]
            i += 2
            continue
        if token.startswith("--data="):
            data = token.removeprefix("--data=")
        elif token.startswith("-") and not _is_number(token):  # -3 is a value, --help is not
            return None
        else:
            positionals.append(token)
        i += 1
    if len(positionals) != 3 or positionals[0] in SUBCOMMANDS:
        return None
    return positionals[0], positionals[1], positionals[2], data


def _typer_args(args: list[str]) -> list[str]:
    """Route a bare query (``printq livePercent greater --help``) to the ``query`` command."""
    i = 0
    while i < len(args):
        if args[i] == "--data":
            i += 2
            continue
        if args[i] == "--":
            return ["query", *args] if i + 1 < len(args) else args
        if not args[i].startswith("-"):
            return args if args[i] in SUBCOMMANDS else ["query", *args]
        i += 1
    return args


def mistyped_command(args: list[str]) -> str | None:
    """The error for a mistyped subcommand (``printq metircs`` -> ``metrics``), or None.

    Only when the words cannot be a query: fewer than three, the first not a metric name.
    """
    words, i = [], 0
    while i < len(args):
        if args[i] == "--data":
            i += 1  # skip its value too
        elif not args[i].startswith("-"):
            words.append(args[i])
        i += 1
    if not words or len(words) >= 3 or words[0] in SUBCOMMANDS:
        return None
    from printq.metrics import find_metric
    from printq.queries import did_you_mean, shown

    hint = did_you_mean(words[0], SUBCOMMANDS)
    if not hint or find_metric(words[0]) is not None:
        return None
    return f"No such command {shown(words[0])}.{hint} A query is three words: METRIC COMPARISON VALUE."


def main(argv: list[str] | None = None) -> int:
    """Run printq with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    fast = parse_fast_query(args)
    if fast is not None:
        return run_query_command(*fast)
    mistyped = mistyped_command(args)
    if mistyped is not None:
        print(f"Error: {mistyped}", file=sys.stderr)
        return 2
    from printq.commands import run_app

    return run_app(_typer_args(args))
