"""`obsctl prune` and `obsctl db info|backup`: retention and database tools."""

from __future__ import annotations

from pathlib import Path

import typer

from obsctl.cli.base import (
    EXIT_FAILURE,
    ObsTyper,
    error,
    notice,
    open_existing,
    open_readonly,
    settings_of,
    translate_errors,
)
from obsctl.cli.options import checked
from obsctl.cli.output import JsonFlag, show, tsv_field
from obsctl.services import maintenance as service
from obsctl.text import plural

db_app = ObsTyper(help="Database tools: info, backup.\n\nExample: obsctl db backup /backups/obsctl-today.db")


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
    """Delete sessions whose last activity is older than --older-than, with their events.

    Example: obsctl prune --older-than 30d --dry-run
    """
    verb = "would delete" if dry_run else "deleted"
    show(service.prune(open_existing(ctx), older_than, dry_run=dry_run), json_, lambda result: print(
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
    quick_check finds it intact (exit 1 when damaged).

    Example: obsctl db info --json
    """
    settings = settings_of(ctx)
    info = service.db_info(open_readonly(ctx), settings.db_path, check=not skip_check)
    integrity = info["integrity"]
    show(info, json_, _print_info, plain=lambda i: _print_info(i, plain=True))
    if integrity["quick_check"] == "damaged":
        error(service.damaged_message(settings.db_path, integrity))
        raise typer.Exit(EXIT_FAILURE)


def _print_info(info: dict, plain: bool = False) -> None:
    """Aligned `key  value` lines on a terminal; `key<TAB>value` lines when piped."""
    integrity = info["integrity"]
    check = integrity["quick_check"]
    if check == "damaged":
        check = f"DAMAGED ({len(integrity['problems'])} problems; first: {integrity['problems'][0]})"
    lines = [
        ("path", info["path"]),
        ("size", f"{info['size_bytes'] / 1e6:.1f} MB ({info['size_bytes']} bytes)"),
        ("schema version", info["schema_version"]),
        ("journal mode", info["journal_mode"]),
        ("sqlite", info["sqlite_version"]),
        ("integrity", check),
    ] + [(f"rows: {table}", count) for table, count in info["tables"].items()]
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        print(f"{tsv_field(key)}\t{tsv_field(value)}" if plain else f"{key:<{width}}  {value}")


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
