"""`obsctl prune` and `obsctl db info|backup`: retention and database tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from obsctl.cli.base import (
    EXIT_FAILURE,
    ObsTyper,
    error,
    local_only,
    notice,
    open_readonly,
    run,
    settings_of,
    translate_errors,
)
from obsctl.cli.options import checked
from obsctl.cli.output import JsonFlag, show, tsv_field
from obsctl.errors import InvalidInput
from obsctl.services import maintenance as service
from obsctl.text import plural

db_app = ObsTyper(help="Database tools: info, backup, copy, reprice.\n\nExample: obsctl db backup /backups/obsctl-today.db")


def _check_age(text: str) -> str:
    service.parse_age(text)
    return text


@translate_errors
def prune_command(
    ctx: typer.Context,
    older_than: str = typer.Option(..., "--older-than", callback=checked(_check_age),
                                   help="Age like 30d, 12h, 90m, 2w; at most 36500d (100 years)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count what would be deleted; delete nothing."),
    json_: JsonFlag = False,
) -> None:
    """Delete sessions whose last activity is older than --older-than, with their events
    (with --url: on the server, a few seconds of work per request until done).

    Example: obsctl prune --older-than 30d --dry-run
    """
    verb = "would delete" if dry_run else "deleted"
    result = run(ctx, service.prune, older_than, dry_run=dry_run, opening="existing",
                 idle_timeout=settings_of(ctx).session_idle_timeout)
    show(result, json_, lambda result: print(
        f"{verb} {plural(result['sessions'], 'session')} and {plural(result['events'], 'event')} "
        f"with no activity since {result['cutoff']}"))


@db_app.command("info")
def info_command(
    ctx: typer.Context,
    json_: JsonFlag = False,
    skip_check: bool = typer.Option(False, "--skip-check",
                                    help="Skip the integrity check (it reads the whole file)."),
) -> None:
    """Show the database path, size, schema version, row counts and whether SQLite's
    quick_check finds it intact (exit 1 when damaged). With --url: the server's database.

    Example: obsctl db info --json
    """
    settings = settings_of(ctx)
    info = run(ctx, service.db_info, settings.db_display if settings.db_url else settings.db_path,
               check=not skip_check)
    integrity = info["integrity"]
    show(info, json_, _print_info, plain=lambda i: _print_info(i, plain=True))
    if integrity["quick_check"] == "damaged":
        error(service.damaged_message(info.get("path") or info.get("url"), integrity))
        raise typer.Exit(EXIT_FAILURE)


def _print_info(info: dict, plain: bool = False) -> None:
    """Aligned `key  value` lines on a terminal; `key<TAB>value` lines when piped."""
    integrity = info["integrity"]
    check = integrity["quick_check"]
    if check == "damaged":
        check = f"DAMAGED ({len(integrity['problems'])} problems; first: {integrity['problems'][0]})"
    if info["backend"] == "sqlite":
        engine = [("journal mode", info["journal_mode"]), ("sqlite", info["sqlite_version"])]
    else:
        engine = [("postgresql", info["postgresql_version"]), ("database", info["database"]),
                  ("schema", info["schema"])]
    lines = [
        ("path", info["path"]) if "path" in info else ("url", info["url"]),
        ("size", f"{info['size_bytes'] / 1e6:.1f} MB ({info['size_bytes']} bytes)"),
        ("schema version", info["schema_version"]),
        *engine,
        ("integrity", check),
        ("prices", _prices_line(info.get("prices"))),
    ] + [(f"rows: {table}", count) for table, count in info["tables"].items()]
    _print_lines(lines, plain)


def _print_lines(lines: list[tuple], plain: bool) -> None:
    """Aligned `key  value` lines on a terminal; `key<TAB>value` lines when piped."""
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        print(f"{tsv_field(key)}\t{tsv_field(value)}" if plain else f"{key:<{width}}  {value}")


def _prices_line(table: dict | None) -> str:
    if table is None:
        return "no cost stored yet"
    line = table["prices"]
    if table["mixed"]:
        line += " (some costs came from another price table: run obsctl db reprice)"
    return line


@db_app.command("reprice")
def reprice_command(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Cost every stored event and session again with the current price table.

    Costs are computed at ingest with genai-prices' bundled prices and the OBSCTL_PRICES
    overrides file. After upgrading obsctl (new genai-prices data), editing that file, or
    upgrading a database that holds events from before costs were stored, run this so every
    cost comes from the same table (`obsctl db info` says when they do not). Calls of models
    without a known price stay unpriced. Spans stored before cache and reasoning tokens were
    counted get those counts from the span attributes they kept, then are priced with them.
    With --url the server uses its own OBSCTL_PRICES.

    Example: OBSCTL_PRICES=prices.json obsctl db reprice
    """
    result = run(ctx, service.reprice, opening="existing")
    show(result, json_, _print_reprice, plain=lambda r: _print_reprice(r, plain=True))


def _print_reprice(result: dict, plain: bool = False) -> None:
    lines = [("prices", result["prices"]), ("models priced", result["models"]),
             ("models without a price", ", ".join(result["unpriced_models"]) or "none"),
             ("events recosted", result["events"]), ("sessions recounted", result["sessions"]),
             ("cache and reasoning counts found", result["cache_counts_recounted"])]
    _print_lines(lines, plain)


@db_app.command("backup")
def backup_command(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="Destination file."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file."),
    json_: JsonFlag = False,
) -> None:
    """Write a consistent copy of the database while the server keeps writing.

    Example: obsctl db backup /backups/obsctl-$(date +%F).db
    """
    result = service.backup(open_readonly(ctx), path, force=force)
    show(result, json_, lambda r: notice(f"backed up to {r['path']} ({r['size_bytes']} bytes)"))


@db_app.command("copy")
def copy_command(
    ctx: typer.Context,
    source: str = typer.Argument(..., metavar="SOURCE", help="A SQLite file (or sqlite:///PATH) or postgresql:// URL."),
    target: str = typer.Argument(..., metavar="TARGET", help="An empty (or new) SQLite file or PostgreSQL database."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    json_: JsonFlag = False,
) -> None:
    """Copy a whole store to another one, e.g. the SQLite file to PostgreSQL, all or nothing.

    The source is read as it was when the copy began (a server may keep writing to it); the
    target must be empty and receives everything in one transaction, checked at the end
    (row counts and session totals): an interrupted or failed copy leaves it empty, so running
    the command again resumes it. Ignores --db.

    Example: obsctl db copy ~/.local/share/obsctl/obsctl.db postgresql://obsctl@db.internal/obsctl
    """
    from obsctl.cli.output import stderr_is_tty
    from obsctl.config import database_location, display_url
    from obsctl.services.storage import open_store
    from obsctl.services.transfer import copy_store

    local_only(ctx, "obsctl db copy")
    source_at, target_at = (database_location(x) for x in (source, target))
    if source_at == target_at:
        raise InvalidInput("SOURCE and TARGET are the same database")
    source_store = open_store(source_at.get("db_url") or source_at["db_path"], mode="read")
    try:
        target_store = open_store(target_at.get("db_url") or target_at["db_path"], mode="create")
        try:
            with _CopyProgress(enabled=stderr_is_tty() and not quiet and not json_) as progress:
                result = copy_store(source_store, target_store, on_start=progress.start,
                                    on_rows=progress.advance)
        finally:
            target_store.close()
    finally:
        source_store.close()
    result = {"source": display_url(source), "target": display_url(target), **result}
    show(result, json_, lambda r: notice(
        f"copied {plural(r['rows'], 'row', sep=True)} ({plural(r['tables']['sessions'], 'session', sep=True)}, "
        f"{plural(r['tables']['events'], 'event', sep=True)}) from {r['source']} to {r['target']}; "
        f"row counts and session totals verified"))


class _CopyProgress:
    """A rich progress bar on stderr (only on a terminal), in rows copied."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._progress: Any = None  # a rich Progress, imported when a copy starts
        self._task: Any = None

    def __enter__(self):
        return self

    def start(self, total: int) -> None:
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(TextColumn("copy {task.fields[table]}"), BarColumn(), MofNCompleteColumn(),
                                  TimeRemainingColumn(), console=Console(stderr=True), transient=True)
        self._progress.start()
        self._task = self._progress.add_task("copy", total=total, table="")

    def advance(self, table: str, rows: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=rows, table=table)

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
        return False
