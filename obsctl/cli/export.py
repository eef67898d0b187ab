"""`obsctl export`: a session as JSON or CSV, or the events of many sessions as JSON Lines,
CSV or Parquet (services/sessions/bulk_export.py), streamed to stdout or a file."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from obsctl.cli import completion
from obsctl.cli.base import notice, run, translate_errors
from obsctl.cli.options import checked
from obsctl.cli.output import JsonFlag, stderr_is_tty
from obsctl.errors import InvalidInput
from obsctl.services.windows import check_since, check_until


def _check_format(value: str) -> str:
    if value in ("json", "csv", "jsonl", "parquet"):
        return value
    raise typer.BadParameter(f"must be json or csv (one session), or jsonl, csv or parquet (many); got {value!r}")


def _check_statuses(values: list[str]) -> list[str]:
    from obsctl.services.sessions.bulk_export import select_events

    select_events(statuses=values)
    return values


@translate_errors
def export_command(
    ctx: typer.Context,
    session_id: str | None = typer.Argument(None, autocompletion=completion.sessions,
                                            help="Session id (one session's export); leave out "
                                                       "with --all or filters."),
    all_: bool = typer.Option(False, "--all", help="Every event of every session."),
    since: str | None = typer.Option(None, "--since", callback=checked(check_since),
                                     help="Events at or after this time: ISO 8601, or an age before "
                                          "--until (30m, 24h, 7d, 2w)."),
    until: str | None = typer.Option(None, "--until", callback=checked(check_until),
                                     help="Events before this time, ISO 8601."),
    agents: list[str] | None = typer.Option(None, "--agent", metavar="<str>", help="Sessions of this agent (repeatable)."),
    statuses: list[str] | None = typer.Option(None, "--status", metavar="<str>", callback=checked(_check_statuses),
                                              help="Sessions with this status: active, completed or "
                                                   "error (repeatable)."),
    sessions: list[str] | None = typer.Option(None, "--session", metavar="<str>", help="This session (repeatable)."),
    event_types: list[str] | None = typer.Option(None, "--event-type", "--type", metavar="<str>",
                                                 help="Events of this type (repeatable); --type is the older name."),
    fmt: str | None = typer.Option(None, "--format", "-f", autocompletion=completion.export_formats,
                                   callback=checked(_check_format),
                                   help="One session: json (the API's body, the default) or csv. Many "
                                        "(--all, filters): jsonl (the default), csv or parquet "
                                        "(needs pip install 'obsctl[parquet]')."),
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", dir_okay=False, help="Write to FILE instead of stdout.")] = None,
    json_: JsonFlag = False,
) -> None:
    """Export a session with all of its events as JSON or CSV, or the events of many
    sessions (--all, or filters) as JSON Lines, CSV or Parquet.

    One session: JSON is the API's export document; CSV has 13 columns, one row per event.
    Many sessions: one event per line or row, in time order, as ingest takes it, so JSON
    Lines re-ingest to the same data (obsctl ingest FILE); CSV and Parquet have the same 18
    columns. Filters combine; a repeated one matches any of its values. The output is
    streamed, so any size exports in bounded memory; with -o the file is written completely
    or not at all, with progress on a terminal.

    Examples: obsctl export sess-42 --format csv -o sess-42.csv;
    obsctl export --since 7d --agent support-bot -o week.jsonl
    """
    filters: dict[str, Any] = {"since": since, "until": until, "agents": agents or (), "statuses": statuses or (),
               "session_ids": sessions or (), "event_types": event_types or ()}
    many = all_ or any(filters.values()) or fmt in ("jsonl", "parquet")
    if json_ and fmt not in (None, "json" if not many else "jsonl"):
        raise typer.BadParameter(f"--json cannot be combined with --format {fmt}", param_hint="--json")
    if not many:
        if session_id is None:
            raise typer.BadParameter("give a SESSION_ID, or --all, or filters (--since, --until, --agent, "
                                     "--status, --session, --event-type) for many sessions", param_hint="SESSION_ID")
        _export_session(ctx, session_id, fmt or "json", output)
        return
    if all_ and (any(filters.values()) or session_id is not None):
        raise typer.BadParameter("--all exports every event; drop it to export what a SESSION_ID or "
                                 "filters select", param_hint="--all")
    if fmt == "json":
        raise typer.BadParameter("json is one session's document; many sessions export as jsonl "
                                 "(the default), csv or parquet", param_hint="--format")
    if session_id is not None:
        filters["session_ids"] = (session_id, *filters["session_ids"])
    _export_events(ctx, filters, fmt or "jsonl", output)


def _export_session(ctx: typer.Context, session_id: str, fmt: str, output: Path | None) -> None:
    from obsctl.services.sessions.export import export_session

    stream = run(ctx, export_session, session_id, fmt)
    if output is None:
        _write_stdout(stream.chunks, b"\n" if stream.format == "json" else b"")
        return
    size = _write_file(output, stream.chunks)
    notice(f"exported session {session_id} as {stream.format} to {output} ({size:,} bytes)")


def _export_events(ctx: typer.Context, filters: dict, fmt: str, output: Path | None) -> None:
    from obsctl.services.sessions.bulk_export import export_events, select_events

    selection = select_events(**filters)
    stream = run(ctx, export_events, selection, fmt)
    if output is None:
        _write_stdout(stream.chunks, b"")
        return
    progress = _Progress(enabled=stderr_is_tty())
    size = _write_file(output, stream.chunks, progress)
    progress.done()
    notice(f"exported events as {stream.format} to {output} ({size:,} bytes)")


def _write_stdout(chunks, end: bytes) -> None:
    out = sys.stdout.buffer
    for chunk in chunks:
        out.write(chunk)
    out.write(end)
    out.flush()


class _Progress:
    """Bytes written so far and the time taken, on one stderr line (only on a terminal)."""

    def __init__(self, *, enabled: bool):
        self.enabled = enabled
        self.started = self.shown = time.monotonic()

    def update(self, size: int) -> None:
        now = time.monotonic()
        if self.enabled and now - self.shown >= 0.5:
            self.shown = now
            sys.stderr.write(f"\rexporting: {size / 1e6:,.1f} MB in {now - self.started:.0f} s")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.shown != self.started:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _write_file(path: Path, chunks, progress: _Progress | None = None) -> int:
    """Write to a temporary file next to `path`, then rename: never a half-written export."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=directory)
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror}") from None
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
                size += len(chunk)
                if progress is not None:
                    progress.update(size)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InvalidInput(f"cannot write {path}: {exc.strerror}") from None
        raise
    return size


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
