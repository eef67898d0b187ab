"""`obsctl export`: a session as JSON or CSV, streamed to stdout or a file."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from obsctl.cli import completion
from obsctl.cli.base import notice, run, translate_errors
from obsctl.cli.options import checked
from obsctl.cli.output import JsonFlag
from obsctl.errors import InvalidInput


def _check_format(value: str) -> str:
    from obsctl.services.sessions.export import check_format

    return check_format(value)


@translate_errors
def export_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., autocompletion=completion.sessions, help="Session id."),
    fmt: str = typer.Option("json", "--format", "-f", autocompletion=completion.export_formats, callback=checked(_check_format),
                            help="json (the API's body; same as --json) or csv."),
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", dir_okay=False, help="Write to FILE instead of stdout.")] = None,
    json_: JsonFlag = False,
) -> None:
    """Export a session with all of its events as JSON or CSV.

    JSON is the API's export document; CSV has 13 columns, one row per event. The output is streamed, so sessions of any size export in bounded memory. With -o the
    file is written completely or not at all.

    Example: obsctl export sess-42 --format csv -o sess-42.csv
    """
    from obsctl.services.sessions.export import export_session

    if json_ and fmt != "json":
        raise typer.BadParameter("--json cannot be combined with --format csv", param_hint="--json")
    stream = run(ctx, export_session, session_id, fmt)
    if output is None:
        out = sys.stdout.buffer
        for chunk in stream.chunks:
            out.write(chunk)
        if stream.format == "json":
            out.write(b"\n")
        out.flush()
        return
    size = _write_file(output, stream.chunks)
    notice(f"exported session {session_id} as {stream.format} to {output} ({size:,} bytes)")


def _write_file(path: Path, chunks) -> int:
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
