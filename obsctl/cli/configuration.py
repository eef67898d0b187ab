"""`obsctl apply` and `obsctl export-config`: alert rules, webhooks and SLA targets as one
YAML file (services/configuration)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from obsctl.cli.base import EXIT_FIRED, notice, run, settings_of
from obsctl.cli.output import JsonFlag, emit_json, fmt_number, show
from obsctl.errors import InvalidInput
from obsctl.services import configuration as service
from obsctl.text import plural

_KINDS = {"alert_rule": "alert rule", "webhook": "webhook", "sla_target": "SLA target"}


def apply_command(
    ctx: typer.Context,
    file: str = typer.Option(..., "--file", "-f", metavar="FILE",
                             help="The configuration file (YAML); - reads standard input."),
    dry_run: bool = typer.Option(False, "--dry-run",
                                 help="Show what would be created, updated or deleted, and change nothing."),
    prune: bool = typer.Option(False, "--prune",
                               help="Delete the rules, webhooks and targets of a section the file has "
                                    "that it does not list."),
    exit_code: bool = typer.Option(False, "--exit-code",
                                   help="Exit with 3 when something changed (with --dry-run: would "
                                        "change), for CI."),
    json_: JsonFlag = False,
) -> None:
    """Create or update alert rules, webhooks and SLA targets from a configuration file, in one
    transaction: all of it or nothing. Applying the same file twice changes nothing the second
    time. Secrets come from the environment variables the file names (secret_env,
    routing_key_env, url_env), read here, also with --url. Format: docs/configuration-as-code.md.

    Example: obsctl apply -f obsctl.yaml --dry-run
    """
    from obsctl.services.configuration.file import file_error, read_config_file

    source = "<stdin>" if file == "-" else file
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {source}: {getattr(exc, 'strerror', None) or exc}") from None
    config = read_config_file(text, source=source, environ=os.environ)
    try:
        result = run(ctx, service.apply_config, settings_of(ctx), config.document, dry_run=dry_run,
                     prune=prune, opening="read" if dry_run else "create")
    except InvalidInput as exc:
        if exc.details:
            raise file_error(config, exc.details) from None
        raise
    show(result, json_, _show_result)
    if exit_code and result["changed"]:
        raise typer.Exit(EXIT_FIRED)


def _value(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return fmt_number(value, digits=None)
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def _show_result(result: dict) -> None:
    for item in result["objects"]:
        line = f"{item['action']:<9}  {_KINDS[item['kind']]:<10}  {item['name']}"
        if item["kind"] == "webhook" and item["id"]:
            line += f" ({item['id']})"
        if item["changes"]:
            line += ": " + ", ".join(f"{c['field']} {_value(c['old'])} -> {_value(c['new'])}"
                                     for c in item["changes"])
        typer.echo(line)
    counts = f"{result['created']} created, {result['updated']} updated, {result['deleted']} deleted"
    if result["dry_run"]:
        planned = (f"{result['created']} to create, {result['updated']} to update, "
                   f"{result['deleted']} to delete")
        summary = (f"Dry run: {planned}; {result['unchanged']} unchanged. Nothing was changed."
                   if result["changed"] else f"Dry run: no changes; {result['unchanged']} unchanged.")
    elif result["changed"]:
        summary = f"Applied: {counts}; {result['unchanged']} unchanged."
    else:
        summary = f"No changes: {plural(result['unchanged'], 'object')} already as the file says."
    if result["unlisted"]:
        summary += (f" {plural(result['unlisted'], 'stored object')} not in the file kept "
                    f"(--prune deletes them).")
    typer.echo(summary)


def export_config_command(
    ctx: typer.Context,
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", dir_okay=False,
                                       help="Write to FILE instead of standard output."),
    json_: JsonFlag = False,
) -> None:
    """Write the alert rules, webhooks and SLA targets as a configuration file that `obsctl
    apply` takes back unchanged. Never a secret: webhooks say has_secret and has_routing_key,
    and URLs that may hold a credential are masked (*** stands for the stored URL).

    Example: obsctl export-config -o obsctl.yaml
    """
    document = run(ctx, service.export_config)
    if output is None:
        if json_:
            emit_json(document)
        else:
            from obsctl.services.configuration.file import dump_config

            sys.stdout.write(dump_config(document))
        return
    if json_:
        import orjson

        text = orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"
    else:
        from obsctl.services.configuration.file import dump_config

        text = dump_config(document)
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot write {output}: {exc.strerror}") from None
    notice(f"wrote {output}")
