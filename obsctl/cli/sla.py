"""`obsctl sla`: SLA targets, checks (for cron), history and summary."""

from __future__ import annotations

import typer

from obsctl.cli import completion
from obsctl.cli.base import EXIT_FIRED, ObsTyper, run, settings_of
from obsctl.cli.options import checked, int_option
from obsctl.cli.output import (
    MISSING,
    JsonFlag,
    Styled,
    console,
    fmt_number,
    fmt_percent,
    render_table,
    rich_cell,
    show,
)
from obsctl.models.sla import SlaSummary
from obsctl.services import sla as service
from obsctl.services.metrics import METRICS
from obsctl.text import plural

app = ObsTyper(help="SLA targets per agent and metric, compliance checks, history and summary.\n\n"
               "Example: obsctl sla set support-bot error_rate '<=' 5 && obsctl sla check")

_STATUS_COLOURS = {"pass": "green", "fail": "red", "no_data": "yellow", "unchecked": "yellow"}


def _num(value) -> str:
    return fmt_number(value, digits=None)


def _status(status: str) -> Styled:
    return Styled(status, _STATUS_COLOURS.get(status, "white"))


def _rate(rate: float | None) -> Styled | None:
    if rate is None:
        return None
    return Styled(fmt_percent(rate), "green" if rate >= 95 else "yellow" if rate >= 80 else "red")


@app.command("set")
def set_command(
    ctx: typer.Context,
    agent: str = typer.Argument(..., autocompletion=completion.agents, help="Agent name."),
    metric: str = typer.Argument(..., autocompletion=completion.metrics, callback=checked(service.check_metric),
                                 help=f"One of: {', '.join(METRICS)}."),
    operator: str = typer.Argument(..., autocompletion=completion.sla_operators, callback=checked(service.check_operator),
                                   help="'<=' or '>=' (quote them), or the words le / ge."),
    value: float = typer.Argument(..., callback=checked(service.check_target_value),
                                  help="The target value."),
    window_hours: int | None = int_option(
        service.WINDOW_HOURS, "--window-hours", default=None,
        show_default="24 for a new target, unchanged for an existing one",
        help="Lookback of the check in hours"),
    json_: JsonFlag = False,
) -> None:
    """Create or update the SLA target of AGENT and METRIC.

    Example: obsctl sla set support-bot p95_duration_ms '<=' 2000 --window-hours 24
    """
    body = {"agent_name": agent, "metric": metric, "operator": operator, "target_value": value}
    if window_hours is not None:
        body["window_hours"] = window_hours
    target, created = run(ctx, service.put_target, body, opening="create")
    show(target, json_, lambda t: typer.echo(
        f"{'created' if created else 'updated'}: {t['agent_name']} {t['metric']} "
        f"{t['operator']} {_num(t['target_value'])} over {t['window_hours']}h"))


@app.command("list")
def list_command(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """List the SLA targets, by agent then metric.

    Example: obsctl sla list
    """
    show(run(ctx, service.list_targets), json_, _show_targets)


def _show_targets(data: dict) -> None:
    rows = [[t["agent_name"], t["metric"], f"{t['operator']} {_num(t['target_value'])}",
             f"{t['window_hours']}h", t["updated_at"]] for t in data["targets"]]
    render_table(plural(data["total"], "SLA target"), ["agent", "metric", "target", "window", "updated_at"],
                 rows)


@app.command("remove")
def remove_command(
    ctx: typer.Context,
    agent: str = typer.Argument(..., autocompletion=completion.agents, help="Agent name."),
    metric: str = typer.Argument(..., autocompletion=completion.metrics, callback=checked(service.check_metric),
                                 help="Metric of the target."),
    json_: JsonFlag = False,
) -> None:
    """Remove the SLA target of AGENT and METRIC (its history stays).

    Example: obsctl sla remove support-bot error_rate
    """
    show(run(ctx, service.delete_target, agent, metric, opening="existing"), json_,
         lambda d: typer.echo(f"removed: {d['agent_name']} {d['metric']}"))


_RESULT_HEADERS = ["agent", "metric", "target", "actual", "status"]


def _result_row(r: dict) -> list:
    return [r["agent_name"], r["metric"], f"{r['operator']} {_num(r['target_value'])}",
            _num(r["actual_value"]), _status(r["status"])]


@app.command("check")
def check_command(
    ctx: typer.Context,
    json_: JsonFlag = False,
    exit_code: bool = typer.Option(False, "--exit-code",
                                   help="Exit with 3 when a target fails (for cron and CI)."),
    quiet: bool = typer.Option(False, "--quiet", "-q",
                               help="Print only failing targets; nothing when all pass."),
) -> None:
    """Check every SLA target now and record the results in the history.

    Run it from cron: the exit code is 3 with --exit-code when a target fails.

    Example: obsctl sla check --quiet --exit-code
    """
    data = run(ctx, service.check_sla, settings_of(ctx), opening="existing")

    def render(data: dict) -> None:
        results = [r for r in data["results"] if r["status"] == "fail"] if quiet else data["results"]
        if results or not quiet:
            title = (f"{data['checked_at']}: {data['passed']} passed, {data['failed']} failed, "
                     f"{data['no_data']} no data")
            render_table(title, _RESULT_HEADERS, [_result_row(r) for r in results])

    show(data, json_, render)
    if exit_code and data["failed"]:
        raise typer.Exit(EXIT_FIRED)


@app.command("history")
def history_command(
    ctx: typer.Context,
    agent: str | None = typer.Option(None, "--agent", autocompletion=completion.agents, help="Only this agent's targets."),
    hours: int = int_option(service.HISTORY_HOURS, "--hours", help="Lookback in hours."),
    limit: int = int_option(service.HISTORY_LIMIT, "--limit", help="Snapshots to show."),
    json_: JsonFlag = False,
) -> None:
    """Show the compliance snapshots of past checks, newest first.

    Example: obsctl sla history --agent support-bot --hours 24
    """
    show(run(ctx, service.sla_history, agent_name=agent, hours=hours, limit=limit), json_, _show_history)


def _show_history(data: dict) -> None:
    rows = [[s["checked_at"], *_result_row(s)] for s in data["snapshots"]]
    render_table(f"{len(rows)} of {plural(data['total'], 'snapshot')}", ["checked_at", *_RESULT_HEADERS], rows)


@app.command("summary")
def summary_command(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Summarise compliance from each target's latest check: pass rates, worst offenders
    and targets at risk (passing, but within 10% of the target). JSON when piped.

    Example: obsctl sla summary
    """
    from obsctl.services.sla.summary import sla_summary

    show(run(ctx, sla_summary), json_, _show_summary, json_when_piped=True)


def _show_summary(data: SlaSummary) -> None:
    out = console()
    out.print(rich_cell([
        Styled("SLA compliance", "bold"), "  overall pass rate ", _rate(data.overall_pass_rate) or MISSING,
        f"  ({data.passed} passed, {data.failed} failed, {data.no_data} no data, "
        f"{data.unchecked} never checked; last check {data.last_checked_at or MISSING})"]))
    render_table("per agent", ["agent", "targets", "passed", "failed", "no data", "pass rate"],
                 [[a.agent_name, a.targets, a.passed, a.failed, a.no_data, _rate(a.pass_rate)]
                  for a in data.agents],
                 justify={h: "right" for h in ("targets", "passed", "failed", "no data", "pass rate")})
    miss_rows = [[o.agent_name, o.metric, f"{o.operator} {_num(o.target_value)}",
                  Styled(_num(o.actual_value), "red"), fmt_percent(o.miss_percent)]
                 for o in data.worst_offenders]
    if miss_rows:
        render_table("worst offenders", ["agent", "metric", "target", "actual", "miss"], miss_rows)
    risk_rows = [[r.agent_name, r.metric, f"{r.operator} {_num(r.target_value)}",
                  Styled(_num(r.actual_value), "yellow"), fmt_percent(r.margin_percent)]
                 for r in data.at_risk]
    if risk_rows:
        render_table("at risk", ["agent", "metric", "target", "actual", "margin"], risk_rows)
    if not miss_rows and not risk_rows:
        out.print("[green]no failing or at-risk targets[/green]")
