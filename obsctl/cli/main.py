"""The `obsctl` root command: global options, then one sub-app per command group."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import typer

from obsctl import __version__
from obsctl.cli import (
    alerts,
    analytics,
    changes,
    compare,
    configuration,
    explain,
    export,
    incidents,
    ingest,
    maintenance,
    postmortem,
    scorecards,
    search,
    serve,
    sessions,
    sla,
    tail,
    triage,
    webhooks,
)
from obsctl.cli.base import ObsTyper, error
from obsctl.cli.target import ENVIRONMENT, Layer, resolve_target, typed_layer
from obsctl.config import Settings
from obsctl.errors import ObsctlError

app = ObsTyper(
    name="obsctl",
    help="Observability for LLM agents: ingest events, inspect sessions, alert, triage.\n\n"
    "Example: obsctl ingest events.jsonl && obsctl sessions list",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"obsctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: str | None = typer.Option(
        None, "--db", envvar=list(ENVIRONMENT["db"]), show_envvar=True, metavar="PATH|URL",
        help="Where the data is: a SQLite file (or sqlite:///PATH), or postgresql://USER@HOST:PORT/DB "
             "[default: $XDG_DATA_HOME/obsctl/obsctl.db]",
    ),
    url: str | None = typer.Option(
        None, "--url", envvar="OBSCTL_URL", show_envvar=True, metavar="URL",
        help="Work against the obsctl server at URL (its HTTP API) instead of a database; "
             "the key is read from --api-key-file or $OBSCTL_API_KEY.",
    ),
    api_key_file: Path | None = typer.Option(
        None, "--api-key-file", metavar="FILE", dir_okay=False,
        help="Read the server's API key from FILE (for --url or $OBSCTL_URL; instead of $OBSCTL_API_KEY).",
    ),
    profile: str | None = typer.Option(
        None, "--profile", envvar="OBSCTL_PROFILE", show_envvar=True, metavar="NAME",
        help="Work against the server named NAME in the config file ($OBSCTL_CONFIG or "
             "~/.config/obsctl/config.toml), sending it only that profile's key. The command line "
             "wins over the environment: --db, --url or --profile here overrides $OBSCTL_DB, "
             "$OBSCTL_URL and $OBSCTL_PROFILE.",
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Observability for LLM agents."""
    # The options are read through the context: typed_layer takes those typed on the command
    # line, Layer.environment the variables, and one rule (cli/target.py) decides between them.
    try:
        target = resolve_target(typed_layer(ctx), Layer.environment(os.environ))
        ctx.obj = replace(Settings.from_env(db_path=target.db), remote_url=target.url,
                          remote_api_key=target.api_key)
    except ObsctlError as exc:
        error(exc.message)
        raise typer.Exit(2) from None


app.command("ingest")(ingest.ingest_command)
app.add_typer(sessions.app, name="sessions")
app.command("serve")(serve.serve_command)
app.command("explain")(explain.explain_command)
app.command("export")(export.export_command)
app.command("tail")(tail.tail_command)
app.command("compare")(compare.compare_command)
app.command("search")(search.search_command)
app.command("analytics")(analytics.analytics_command)
app.command("prune")(maintenance.prune_command)
app.add_typer(maintenance.db_app, name="db")
app.add_typer(alerts.app, name="alerts")
app.add_typer(webhooks.app, name="webhooks")
app.add_typer(triage.app, name="triage")
app.command("incidents")(incidents.incidents_command)
app.add_typer(changes.app, name="changes")
app.add_typer(postmortem.app, name="postmortem")
app.add_typer(sla.app, name="sla")
app.add_typer(scorecards.app, name="scorecards")
app.command("apply")(configuration.apply_command)
app.command("export-config")(configuration.export_config_command)


def main() -> None:
    app()
