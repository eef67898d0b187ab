"""`obsctl ingest`: stream events from a file or stdin into the database."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from obsctl.cli import completion
from obsctl.cli.base import EXIT_FAILURE, error, notice, run, translate_errors
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import JsonFlag, show, stderr_is_tty
from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.params import IntParam
from obsctl.text import plural

MAX_REJECT_LINES = 50
BATCH_SIZE = IntParam("batch_size", 1, 100000, default=1000)


def _check_format(fmt: str) -> str:
    from obsctl.services.ingest.source import FORMATS

    formats = (*FORMATS, "otlp-json")
    if fmt not in formats:
        raise InvalidInput(f"format must be one of {', '.join(formats)}; got {describe_value(fmt)}")
    return fmt


@translate_errors
def ingest_command(
    ctx: typer.Context,
    source: str = typer.Argument("-", metavar="FILE|-", help="JSONL, a JSON array, "
                                 '{"events": [...]}, one event object, or OTLP JSON; "-" reads stdin.'),
    fmt: str = typer.Option("auto", "--format", "-f", autocompletion=completion.ingest_formats, callback=checked(_check_format),
                            help="Input format: auto (told from the content), jsonl, json, "
                            "otlp-json (OpenTelemetry traces as a collector's file exporter "
                            "writes them)."),
    strict: bool = typer.Option(False, "--strict", help="Store nothing if any record is bad, "
                                "an event with a field that is not an event field included."),
    batch_size: int = int_option(BATCH_SIZE, "--batch-size", help="Events per transaction."),
    json_: JsonFlag = False,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, summary line or warnings."),
) -> None:
    """Ingest agent events from FILE (or stdin).

    Valid records are stored while bad ones are reported on stderr with their line number;
    the exit code is 1 when any record was rejected. Events with fields that are not event
    fields are stored without them and counted in a warning. Timestamps more than
    OBSCTL_MAX_FUTURE_SKEW (default 1d) in the future are rejected. Memory stays bounded.

    With --url the events are sent to the server in batches; an event without an event_id gets
    one made from its line and content, so running the same file again stores nothing twice.

    Example: cat events.jsonl | obsctl ingest -
    """
    from obsctl import gcpolicy
    from obsctl.services.ingest import source as event_source
    from obsctl.services.ingest.stream import ingest_stream

    stream, total_bytes, label = _open_source(source)
    reader = event_source.CountingReader(stream)
    try:
        fmt = event_source.detect_format(reader, fmt, label)
    except InvalidInput:
        _close(stream)
        raise
    max_future = ctx.obj.max_future_skew
    rejected_shown = 0

    def on_reject(location: int, message: str) -> None:
        nonlocal rejected_shown
        rejected_shown += 1
        if rejected_shown <= MAX_REJECT_LINES:
            error(f"{label}:{location}: rejected: {message}")
        elif rejected_shown == MAX_REJECT_LINES + 1:
            error("... more rejected records not shown")

    progress = _Progress(total_bytes, reader, enabled=stderr_is_tty() and not quiet and not json_)
    gcpolicy.for_bulk_work()
    try:
        with progress:
            if fmt == "otlp-json":
                from obsctl.services.otlp.file import ingest_otlp_stream

                summary = run(ctx, ingest_otlp_stream, reader, strict=strict, max_future=max_future,
                              on_reject=on_reject, on_batch=lambda s: progress.update(s.events),
                              opening="create")
            else:
                summary = run(
                    ctx, ingest_stream, event_source.read_events(reader, fmt), batch_size=batch_size,
                    strict=strict, max_future=max_future, on_reject=on_reject,
                    on_batch=lambda s: progress.update(s.events), opening="create",
                )
    finally:
        _close(stream)
    show(summary.as_dict(), json_, lambda data: None if quiet else _report(data))
    if summary.rejected:
        raise typer.Exit(EXIT_FAILURE)


def _report(data: dict) -> None:
    """The summary line and warnings, on stderr: stdout stays empty without --json."""
    notice(
        f"ingested {plural(data['events'], 'event')} into {plural(data['sessions'], 'session')} "
        f"({data['stored']} new, {plural(data['duplicates'], 'duplicate')}, {data['rejected']} rejected)"
    )
    for warning in data.get("warnings", ()):
        notice(f"warning: {warning['message']}")


def _close(stream) -> None:
    if stream is not sys.stdin.buffer:
        stream.close()


def _open_source(source: str):
    if source == "-":
        if sys.stdin.isatty():
            notice("reading events from the terminal (end with Ctrl-D); pass FILE or pipe a file instead")
        return sys.stdin.buffer, None, "<stdin>"
    path = Path(source)
    try:
        stream = open(path, "rb")  # noqa: SIM115 (closed by the caller after streaming)
    except FileNotFoundError:
        raise InvalidInput(f"file not found: {path}") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a directory, not a file") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    return stream, os.fstat(stream.fileno()).st_size, str(path)


class _Progress:
    """A rich progress bar on stderr (only on a terminal), driven by bytes read."""

    def __init__(self, total: int | None, reader, enabled: bool):
        self.enabled = enabled
        self.total = total
        self.reader = reader
        self._progress = None
        self._task = None

    def __enter__(self):
        if self.enabled:
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("ingesting"), BarColumn(), DownloadColumn(),
                TextColumn("{task.fields[events]} events"), TimeRemainingColumn(), transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("ingest", total=self.total, events=0)
        return self

    def update(self, events: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self.reader.bytes_read, events=events)

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
        return False
