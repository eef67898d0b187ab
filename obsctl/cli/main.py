"""The `obsctl` root command: global options, then one sub-app per command group."""

from __future__ import annotations

import typer

from obsctl import __version__
from obsctl.cli import (
    alerts,
    analytics,
    compare,
    explain,
    export,
    ingest,
    maintenance,
    postmortem,
    scorecards,
    serve,
    sessions,
    sla,
    triage,
    webhooks,
)
from obsctl.cli.base import ObsTyper
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
        None, "--db", envvar=["OBSCTL_DATABASE_URL", "OBSCTL_DB"], show_envvar=True, metavar="PATH|URL",
        help="Where the data is: a SQLite file (or sqlite:///PATH), or postgresql://USER@HOST:PORT/DB "
             "[default: $XDG_DATA_HOME/obsctl/obsctl.db]",
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Observability for LLM agents."""
    try:
        ctx.obj = Settings.from_env(db_path=db)
    except ObsctlError as exc:
        typer.echo(f"Error: {exc.message}", err=True)
        raise typer.Exit(2) from None


app.command("ingest")(ingest.ingest_command)
app.add_typer(sessions.app, name="sessions")
app.command("serve")(serve.serve_command)
app.command("explain")(explain.explain_command)
app.command("export")(export.export_command)
app.command("compare")(compare.compare_command)
app.command("analytics")(analytics.analytics_command)
app.command("prune")(maintenance.prune_command)
app.add_typer(maintenance.db_app, name="db")
app.add_typer(alerts.app, name="alerts")
app.add_typer(webhooks.app, name="webhooks")
app.add_typer(triage.app, name="triage")
app.add_typer(postmortem.app, name="postmortem")
app.add_typer(sla.app, name="sla")
app.add_typer(scorecards.app, name="scorecards")


def main() -> None:
    app()
