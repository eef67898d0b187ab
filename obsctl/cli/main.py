"""The `obsctl` root command: global options, then one sub-app per command group."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import typer

from obsctl import __version__
from obsctl.cli.base import ObsTyper, error
from obsctl.cli.lazy import Lazy, LazyGroup
from obsctl.cli.target import ENVIRONMENT, Layer, resolve_target, typed_layer
from obsctl.config import Settings
from obsctl.errors import ObsctlError


class Commands(LazyGroup):
    """obsctl's commands, in the order `obsctl --help` lists them (cli/lazy.py)."""

    LAZY = {
        "ingest": Lazy("ingest", "ingest_command", "Ingest agent events from FILE (or stdin)."),
        "serve": Lazy("serve", "serve_command", "Serve the HTTP API (waitress)."),
        "explain": Lazy("explain", "explain_command", "Explain a session as Markdown."),
        "export": Lazy("export", "export_command",
                       "Export a session with all of its events as JSON or CSV, or the events of many "
                       "sessions (--all, or filters) as JSON Lines, CSV or Parquet."),
        "tail": Lazy("tail", "tail_command",
                     "Print events as they are stored, like tail -f: the last --lines events first, then "
                     "each new one (in the order they were stored, whatever their timestamps), until Ctrl-C, "
                     "which exits with code 130."),
        "compare": Lazy("compare", "compare_command", "Compare session B against baseline session A."),
        "search": Lazy("search", "search_command",
                       "Search event inputs, outputs, tool calls (with their errors) and reasoning; newest "
                       "first, with a snippet of the field that matched (matched words in bold on a terminal)."),
        "analytics": Lazy("analytics", "analytics_command", "Analytics across all sessions."),
        "agents": Lazy("agents", "agents_command",
                       "List the agents with sessions started in the last --days days: sessions by status, "
                       "error rate, events, tokens, mean duration and latest event; most sessions first."),
        "prune": Lazy("maintenance", "prune_command",
                      "Delete sessions whose last activity is older than --older-than, with their events "
                      "(with --url: on the server, a few seconds of work per request until done)."),
        "incidents": Lazy("incidents", "incidents_command",
                          "List incidents: the same failure (error fingerprint, tool and model) in several "
                          "sessions within a window, most severe first (SEV-1: 3+ agents or 10+ sessions; "
                          "SEV-2: 2 agents or 3+ sessions; SEV-3: the rest)."),
        "apply": Lazy("configuration", "apply_command",
                      "Create or update alert rules, webhooks and SLA targets from a configuration file, in "
                      "one transaction: all of it or nothing."),
        "export-config": Lazy("configuration", "export_config_command",
                              "Write the alert rules, webhooks and SLA targets as a configuration file that "
                              "`obsctl apply` takes back unchanged."),
        "sessions": Lazy("sessions", "app", "List, show, delete, tag and score sessions."),
        "db": Lazy("maintenance", "db_app", "Database tools: info, backup, copy, reprice."),
        "alerts": Lazy("alerts", "app", "Alert rules on agent metrics, their evaluation and fired alerts."),
        "webhooks": Lazy("webhooks", "app", "Webhooks called when alerts fire (generic JSON, Slack, PagerDuty)."),
        "triage": Lazy("triage", "app",
                       "Triage sessions: health score, grade and severity-ranked findings with suggestions."),
        "changes": Lazy("changes", "app",
                        "List changes of agents' configurations (the model doing most of the work, the release "
                        "in the session metadata) that started in the window, with LLM latency, cost per "
                        "session and error rate before and after; unacknowledged regressions first."),
        "postmortem": Lazy("postmortem", "app",
                           "Postmortem reports: timeline, error cascade, costs, tools, contributing factors."),
        "sla": Lazy("sla", "app", "SLA targets per agent and metric, compliance checks, history and summary."),
        "scorecards": Lazy("scorecards", "app",
                           "Grade every agent with a session in the last --days days: overall score and the "
                           "reliability, performance, efficiency and throughput dimensions, best first."),
    }


app = ObsTyper(
    name="obsctl",
    cls=Commands,
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


def main() -> None:
    app()
