"""`obsctl prune` and `obsctl db info|backup`: retention and database tools."""

from __future__ import annotations

from pathlib import Path

import typer

from obsctl.cli.base import (
    ObsTyper,
    emit_json,
    notice,
    open_database,
    settings_of,
    stdout_is_tty,
    translate_errors,
)
from obsctl.cli.options import checked
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
    json_: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Delete sessions whose last activity is older than --older-than, with their events.

    Example: obsctl prune --older-than 30d --dry-run
    """
    result = service.prune(open_database(ctx), older_than, dry_run=dry_run)
    if json_:
        emit_json(result)
        return
    verb = "would delete" if dry_run else "deleted"
    print(f"{verb} {plural(result['sessions'], 'session')} and {plural(result['events'], 'event')} "
          f"with no activity since {result['cutoff']}")


@db_app.command("info")
def info_command(
    ctx: typer.Context,
    json_: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Show the database path, size, schema version and row counts.

    Example: obsctl db info --json
    """
    settings = settings_of(ctx)
    info = service.db_info(open_database(ctx), settings.db_path)
    if json_:
        emit_json(info)
        return
    lines = [
        ("path", info["path"]),
        ("size", f"{info['size_bytes'] / 1e6:.1f} MB ({info['size_bytes']} bytes)"),
        ("schema version", info["schema_version"]),
        ("journal mode", info["journal_mode"]),
        ("sqlite", info["sqlite_version"]),
    ] + [(f"rows: {table}", count) for table, count in info["tables"].items()]
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        print(f"{key:<{width}}  {value}" if stdout_is_tty() else f"{key}\t{value}")


@db_app.command("backup")
def backup_command(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="Destination file."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file."),
    json_: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Write a consistent copy of the database while the server keeps writing.

    Example: obsctl db backup /backups/obsctl-$(date +%F).db
    """
    result = service.backup(open_database(ctx), path, force=force)
    if json_:
        emit_json(result)
    else:
        notice(f"backed up to {result['path']} ({result['size_bytes']} bytes)")
