"""`obsctl sla`: SLA targets, checks (for cron), history and summary."""

from __future__ import annotations

import typer

from obsctl.cli.base import (
    EXIT_FIRED,
    ObsTyper,
    console,
    emit_json,
    open_database,
    open_existing,
    open_readonly,
    render_table,
    settings_of,
    stdout_is_tty,
)
from obsctl.cli.options import checked, int_option
from obsctl.services import sla as service
from obsctl.services.metrics import METRICS
from obsctl.text import plural

app = ObsTyper(help="SLA targets per agent and metric, compliance checks, history and summary.\n\n"
               "Example: obsctl sla set support-bot error_rate '<=' 5 && obsctl sla check")

_JSON = typer.Option(False, "--json", help="Print the API's JSON body.")
_STATUS_COLOURS = {"pass": "green", "fail": "red", "no_data": "yellow", "unchecked": "yellow"}


def _num(value) -> str:
    if value is None:
        return "null"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _coloured(text: str, colour: str) -> str:
    return f"[{colour}]{text}[/{colour}]" if stdout_is_tty() else text


def _status(status: str) -> str:
    return _coloured(status, _STATUS_COLOURS.get(status, "white"))


def _rate(rate: float | None) -> str:
    if rate is None:
        return "-"
    colour = "green" if rate >= 95 else "yellow" if rate >= 80 else "red"
    return _coloured(f"{rate:.2f}%", colour)


@app.command("set")
def set_command(
    ctx: typer.Context,
    agent: str = typer.Argument(..., help="Agent name."),
    metric: str = typer.Argument(..., callback=checked(service.check_metric),
                                 help=f"One of: {', '.join(METRICS)}."),
    operator: str = typer.Argument(..., callback=checked(service.check_operator),
                                   help="'<=' or '>=' (quote them), or the words le / ge."),
    value: float = typer.Argument(..., callback=checked(service.check_target_value),
                                  help="The target value."),
    window_hours: int | None = int_option(
        service.WINDOW_HOURS, "--window-hours", default=None,
        show_default="24 for a new target, unchanged for an existing one",
        help="Lookback of the check in hours"),
    json_: bool = _JSON,
) -> None:
    """Create or update the SLA target of AGENT and METRIC.

    Example: obsctl sla set support-bot p95_duration_ms '<=' 2000 --window-hours 24
    """
    body = {"agent_name": agent, "metric": metric, "operator": operator, "target_value": value}
    if window_hours is not None:
        body["window_hours"] = window_hours
    target, created = service.put_target(open_database(ctx), body)
    if json_:
        emit_json(target)
        return
    typer.echo(f"{'created' if created else 'updated'}: {target['agent_name']} {target['metric']} "
               f"{target['operator']} {_num(target['target_value'])} "
               f"over {target['window_hours']}h")


@app.command("list")
def list_command(ctx: typer.Context, json_: bool = _JSON) -> None:
    """List the SLA targets, by agent then metric.

    Example: obsctl sla list
    """
    data = service.list_targets(open_readonly(ctx))
    if json_:
        emit_json(data)
        return
    rows = [[t["agent_name"], t["metric"], f"{t['operator']} {_num(t['target_value'])}",
             f"{t['window_hours']}h", t["updated_at"]] for t in data["targets"]]
    render_table(plural(data["total"], "SLA target"), ["agent", "metric", "target", "window", "updated_at"],
                 rows)


@app.command("remove")
def remove_command(
    ctx: typer.Context,
    agent: str = typer.Argument(..., help="Agent name."),
    metric: str = typer.Argument(..., callback=checked(service.check_metric),
                                 help="Metric of the target."),
    json_: bool = _JSON,
) -> None:
    """Remove the SLA target of AGENT and METRIC (its history stays).

    Example: obsctl sla remove support-bot error_rate
    """
    data = service.delete_target(open_existing(ctx), agent, metric)
    if json_:
        emit_json(data)
        return
    typer.echo(f"removed: {data['agent_name']} {data['metric']}")


_RESULT_HEADERS = ["agent", "metric", "target", "actual", "status"]


def _result_row(r: dict) -> list:
    return [r["agent_name"], r["metric"], f"{r['operator']} {_num(r['target_value'])}",
            _num(r["actual_value"]), _status(r["status"])]


@app.command("check")
def check_command(
    ctx: typer.Context,
    json_: bool = _JSON,
    exit_code: bool = typer.Option(False, "--exit-code",
                                   help="Exit with 3 when a target fails (for cron and CI)."),
    quiet: bool = typer.Option(False, "--quiet", "-q",
                               help="Print only failing targets; nothing when all pass."),
) -> None:
    """Check every SLA target now and record the results in the history.

    Run it from cron: the exit code is 3 with --exit-code when a target fails.

    Example: obsctl sla check --quiet --exit-code
    """
    data = service.check_sla(open_existing(ctx), settings_of(ctx))
    if json_:
        emit_json(data)
    else:
        results = [r for r in data["results"] if r["status"] == "fail"] if quiet else data["results"]
        if results or not quiet:
            title = (f"{data['checked_at']}: {data['passed']} passed, {data['failed']} failed, "
                     f"{data['no_data']} no data")
            render_table(title, _RESULT_HEADERS, [_result_row(r) for r in results])
    if exit_code and data["failed"]:
        raise typer.Exit(EXIT_FIRED)


@app.command("history")
def history_command(
    ctx: typer.Context,
    agent: str | None = typer.Option(None, "--agent", help="Only this agent's targets."),
    hours: int = int_option(service.HISTORY_HOURS, "--hours", help="Lookback in hours."),
    limit: int = int_option(service.HISTORY_LIMIT, "--limit", help="Snapshots to show."),
    json_: bool = _JSON,
) -> None:
    """Show the compliance snapshots of past checks, newest first.

    Example: obsctl sla history --agent support-bot --hours 24
    """
    data = service.sla_history(open_readonly(ctx), agent_name=agent, hours=hours, limit=limit)
    if json_:
        emit_json(data)
        return
    rows = [[s["checked_at"], *_result_row(s)] for s in data["snapshots"]]
    render_table(f"{len(rows)} of {plural(data['total'], 'snapshot')}", ["checked_at", *_RESULT_HEADERS], rows)


@app.command("summary")
def summary_command(ctx: typer.Context, json_: bool = _JSON) -> None:
    """Summarise compliance from each target's latest check: pass rates, worst offenders
    and targets at risk (passing, but within 10% of the target). JSON when piped.

    Example: obsctl sla summary
    """
    from obsctl.services.sla.summary import sla_summary

    data = sla_summary(open_readonly(ctx))
    if json_ or not stdout_is_tty():
        emit_json(data)
        return
    out = console()
    out.print(f"[bold]SLA compliance[/bold]  overall pass rate {_rate(data['overall_pass_rate'])}  "
              f"({data['passed']} passed, {data['failed']} failed, {data['no_data']} no data, "
              f"{data['unchecked']} never checked; last check {data['last_checked_at'] or '-'})")
    render_table("per agent", ["agent", "targets", "passed", "failed", "no data", "pass rate"],
                 [[a["agent_name"], a["targets"], a["passed"], a["failed"], a["no_data"],
                   _rate(a["pass_rate"])] for a in data["agents"]],
                 justify={h: "right" for h in ("targets", "passed", "failed", "no data", "pass rate")})
    miss_rows = [[o["agent_name"], o["metric"], f"{o['operator']} {_num(o['target_value'])}",
                  _coloured(_num(o["actual_value"]), "red"),
                  "n/a" if o["miss_percent"] is None else f"{o['miss_percent']:.2f}%"]
                 for o in data["worst_offenders"]]
    if miss_rows:
        render_table("worst offenders", ["agent", "metric", "target", "actual", "miss"], miss_rows)
    risk_rows = [[r["agent_name"], r["metric"], f"{r['operator']} {_num(r['target_value'])}",
                  _coloured(_num(r["actual_value"]), "yellow"),
                  "n/a" if r["margin_percent"] is None else f"{r['margin_percent']:.2f}%"]
                 for r in data["at_risk"]]
    if risk_rows:
        render_table("at risk", ["agent", "metric", "target", "actual", "margin"], risk_rows)
    if not miss_rows and not risk_rows:
        out.print("[green]no failing or at-risk targets[/green]")
