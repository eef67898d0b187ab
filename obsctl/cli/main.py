"""The `obsctl` root command: global options, then one sub-app per command group."""

from __future__ import annotations

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
from obsctl.cli.base import ObsTyper
from obsctl.client.keys import read_key_file
from obsctl.client.profiles import load_profile
from obsctl.config import Settings
from obsctl.errors import InvalidInput, ObsctlError

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
        None, "--db", envvar=["OBSCTL_DATABASE_URL", "OBSCTL_DB"], show_envvar=True, metavar="PATH|URL",
        help="Where the data is: a SQLite file (or sqlite:///PATH), or postgresql://USER@HOST:PORT/DB "
             "[default: $XDG_DATA_HOME/obsctl/obsctl.db]",
    ),
    url: str | None = typer.Option(
        None, "--url", envvar="OBSCTL_URL", show_envvar=True, metavar="URL",
        help="Work against the obsctl server at URL (its HTTP API) instead of a database; "
             "the key is read from $OBSCTL_API_KEY or --api-key-file.",
    ),
    api_key_file: Path | None = typer.Option(
        None, "--api-key-file", metavar="FILE", dir_okay=False,
        help="Read the server's API key from FILE (for --url; instead of $OBSCTL_API_KEY).",
    ),
    profile: str | None = typer.Option(
        None, "--profile", envvar="OBSCTL_PROFILE", show_envvar=True, metavar="NAME",
        help="Work against the server named NAME in the config file "
             "($OBSCTL_CONFIG or ~/.config/obsctl/config.toml); --url and --api-key-file win over it.",
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Observability for LLM agents."""
    try:
        if db is not None and url is not None:
            # What the command line says wins over the environment; two of the same kind clash.
            # (Typer carries its own click: the source is compared by name.)
            db_given, url_given = (getattr(ctx.get_parameter_source(name), "name", "") == "COMMANDLINE"
                                   for name in ("db", "url"))
            if db_given == url_given:
                raise InvalidInput("--db (or $OBSCTL_DATABASE_URL) and --url (or $OBSCTL_URL) cannot "
                                   "be combined: choose a database or a server")
            db, url = (db, None) if db_given else (None, url)
        key = read_key_file(api_key_file) if api_key_file else None
        if profile is not None:
            if db is not None:
                raise InvalidInput("--db and --profile cannot be combined: choose a database or a server")
            named = load_profile(profile)
            url, key = url or named.url, key or named.api_key
        ctx.obj = Settings.from_env(db_path=db, remote_url=url, remote_api_key=key)
    except ObsctlError as exc:
        typer.echo(f"Error: {exc.message}", err=True)
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
