"""`obsctl alerts`: rules, evaluation (for cron), alert events and acknowledgement."""

from __future__ import annotations

import typer

from obsctl.cli import completion
from obsctl.cli.base import EXIT_FIRED, ObsTyper, notice, run, settings_of
from obsctl.cli.options import checked, int_option, on_off
from obsctl.cli.output import JsonFlag, fmt_number, render_table, show
from obsctl.services import alerts
from obsctl.services.alerts import rules as alert_rules
from obsctl.text import plural

app = ObsTyper(help="Alert rules on agent metrics, their evaluation and fired alerts.\n\n"
               "Example: obsctl alerts evaluate --exit-code")
rules_app = ObsTyper(help="Create, list, update and remove alert rules.\n\n"
                     "Example: obsctl alerts rules add --name errors --metric error_rate "
                     "--operator '>' --threshold 5")
app.add_typer(rules_app, name="rules")

_OPERATOR_HELP = "One of < > <= >= == != (quote them) or the words lt gt le ge eq ne."
_RULE_HEADERS = ["rule_id", "name", "metric", "condition", "window", "cooldown", "agent", "severity",
                 "enabled", "last_fired_at"]
_SEVERITY_HELP = "How urgent its alerts are: critical, error, warning or info (PagerDuty's severity)."


def _num(value) -> str:
    return fmt_number(value, digits=None)


def _rule_row(rule: dict) -> list:
    return [rule["rule_id"], rule["name"], rule["metric"], f"{rule['operator']} {_num(rule['threshold'])}",
            f"{rule['window_minutes']}m", f"{rule['cooldown_minutes']}m", rule["agent_filter"] or "*",
            rule["severity"], "yes" if rule["enabled"] else "no", rule["last_fired_at"]]


def _show_rules(title: str, rules: list[dict]) -> None:
    render_table(title, _RULE_HEADERS, [_rule_row(r) for r in rules])


def _rule_body(name, metric, operator, threshold, window_minutes, cooldown_minutes, agent_filter,
               enabled, severity) -> dict:
    values = {"name": name, "metric": metric, "operator": operator, "threshold": threshold,
              "window_minutes": window_minutes, "cooldown_minutes": cooldown_minutes,
              "agent_filter": agent_filter, "enabled": enabled, "severity": severity}
    return {k: v for k, v in values.items() if v is not None}


@rules_app.command("add")
def add_rule(
    ctx: typer.Context,
    name: str = typer.Option(..., "--name", help="What the alert is called."),
    metric: str = typer.Option(..., "--metric", autocompletion=completion.metrics, callback=checked(alert_rules.check_metric),
                               help=f"One of: {', '.join(alert_rules.METRICS)}."),
    operator: str = typer.Option(..., "--operator", autocompletion=completion.operators, callback=checked(alert_rules.check_operator),
                                 help=_OPERATOR_HELP),
    threshold: float = typer.Option(..., "--threshold", callback=checked(alert_rules.check_threshold),
                                    help="The boundary value."),
    window_minutes: int | None = int_option(alert_rules.WINDOW_MINUTES, "--window-minutes",
                                            help="Lookback window", default=None,
                                            show_default=str(alert_rules.WINDOW_MINUTES.default)),
    cooldown_minutes: int | None = int_option(alert_rules.COOLDOWN_MINUTES, "--cooldown-minutes",
                                              help="Quiet time after firing (0: none)", default=None,
                                              show_default=str(alert_rules.COOLDOWN_MINUTES.default)),
    agent_filter: str | None = typer.Option(None, "--agent-filter", autocompletion=completion.agents, help="Only this agent's sessions."),
    severity: str | None = typer.Option(None, "--severity", autocompletion=completion.severities, callback=checked(alert_rules.check_severity),
                                        help=_SEVERITY_HELP + "  [default: warning]"),
    disabled: bool = typer.Option(False, "--disabled", help="Create the rule disabled."),
    json_: JsonFlag = False,
) -> None:
    """Create an alert rule.

    Example: obsctl alerts rules add --name "error spike" --metric error_rate --operator '>' --threshold 5 --window-minutes 15 --severity critical
    """
    body = _rule_body(name, metric, operator, threshold, window_minutes, cooldown_minutes,
                      agent_filter, False if disabled else None, severity)
    rule = run(ctx, alert_rules.create_rule, body, opening="create")
    show(rule, json_, lambda r: _show_rules("rule created", [r]))


@rules_app.command("list")
def list_rules(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """List every alert rule, enabled or not.

    Example: obsctl alerts rules list
    """
    data = run(ctx, alert_rules.list_rules)
    show(data, json_, lambda d: _show_rules(plural(d["total"], "alert rule"), d["rules"]))


@rules_app.command("update")
def update_rule(
    ctx: typer.Context,
    rule_id: str = typer.Argument(..., help="Rule id."),
    name: str | None = typer.Option(None, "--name", help="New name."),
    metric: str | None = typer.Option(None, "--metric", autocompletion=completion.metrics, callback=checked(alert_rules.check_metric),
                                      help="New metric."),
    operator: str | None = typer.Option(None, "--operator", autocompletion=completion.operators, callback=checked(alert_rules.check_operator),
                                        help=_OPERATOR_HELP),
    threshold: float | None = typer.Option(None, "--threshold",
                                           callback=checked(alert_rules.check_threshold),
                                           help="New boundary value."),
    window_minutes: int | None = int_option(alert_rules.WINDOW_MINUTES, "--window-minutes",
                                            help="New lookback window", default=None),
    cooldown_minutes: int | None = int_option(alert_rules.COOLDOWN_MINUTES, "--cooldown-minutes",
                                              help="New quiet time after firing", default=None),
    agent_filter: str | None = typer.Option(None, "--agent-filter", autocompletion=completion.agents,
                                               help="Agent name; an empty string means all agents."),
    severity: str | None = typer.Option(None, "--severity", autocompletion=completion.severities, callback=checked(alert_rules.check_severity),
                                        help=_SEVERITY_HELP),
    enable: bool = typer.Option(False, "--enable", help="Turn the rule on."),
    disable: bool = typer.Option(False, "--disable", help="Turn the rule off."),
    json_: JsonFlag = False,
) -> None:
    """Change some fields of a rule; the others keep their values.

    Example: obsctl alerts rules update rule_0123456789abcdef --threshold 10 --disable
    """
    body = _rule_body(name, metric, operator, threshold, window_minutes, cooldown_minutes,
                      agent_filter, on_off(enable, disable, "rule"), severity)
    rule = run(ctx, alert_rules.update_rule, rule_id, body, opening="existing")
    show(rule, json_, lambda r: _show_rules("rule updated", [r]))


@rules_app.command("remove")
def remove_rule(ctx: typer.Context, rule_id: str = typer.Argument(..., help="Rule id."),
                json_: JsonFlag = False) -> None:
    """Delete a rule and all of its alert events; their pending webhook deliveries are cancelled.

    Example: obsctl alerts rules remove rule_0123456789abcdef
    """
    data = run(ctx, alert_rules.delete_rule, rule_id, opening="existing")
    show(data, json_, lambda _: notice(f"deleted rule {rule_id} and its alert events "
                                       f"(pending webhook deliveries cancelled)"))


@app.command("metrics")
def metrics(json_: JsonFlag = False) -> None:
    """List the metrics usable in alert rules (and SLA targets).

    Example: obsctl alerts metrics --json
    """
    data = alert_rules.list_metrics()
    show(data, json_, lambda d: render_table("metrics", ["name", "description"],
                                             [[m["name"], m["description"]] for m in d["metrics"]]))


@app.command("evaluate")
def evaluate(
    ctx: typer.Context,
    json_: JsonFlag = False,
    exit_code: bool = typer.Option(False, "--exit-code", help="Exit 3 when any rule fired."),
    verbose: bool = typer.Option(False, "--verbose",
                                 help="Also report webhook deliveries made and retries queued."),
    dry_run: bool = typer.Option(False, "--dry-run",
                                 help="Record and send nothing: say which rules would fire or be resolved."),
    at: str | None = typer.Option(None, "--at", callback=checked(lambda v: alerts.parse_moment(v, "--at")),
                                  help="With --dry-run: evaluate as of this ISO 8601 moment, to tune "
                                       "thresholds on history."),
) -> None:
    """Evaluate every enabled rule now and send webhooks for those that fire.

    Made for cron: prints nothing unless a rule fired (one line per alert) or a webhook
    delivery failed for good (on stderr). Deliveries that fail stay queued and are retried
    quietly by the next runs for up to 24 hours; --verbose reports them every run.

    Example: * * * * * obsctl alerts evaluate --exit-code || notify-admins
    Example: obsctl alerts evaluate --dry-run --at 2026-03-10T20:30:00Z
    """
    from obsctl.services.webhooks.delivery import deliver_due

    if at is not None and not dry_run:
        raise typer.BadParameter("--at needs --dry-run: an evaluation of a past moment records and sends "
                                 "nothing", param_hint="--at")
    settings = settings_of(ctx)
    body = run(ctx, alerts.evaluate_alerts, settings, at=at, dry_run=dry_run, opening="existing")
    show(body, json_, _print_fired)
    if dry_run:
        if exit_code and body["would_fire"]:
            raise typer.Exit(EXIT_FIRED)
        return
    # Against a server this attempts nothing: the server sends the deliveries itself.
    report = run(ctx, deliver_due, settings, opening="existing")
    failed = report.failed + report.expired
    if failed:
        notice(f"webhooks: {failed} deliver{'y' if failed == 1 else 'ies'} failed for good; "
               f"last error: {report.last_failure} (see: obsctl webhooks deliveries --status failed)")
    if verbose and report.sent_by:
        notice(f"webhooks: the server at {report.sent_by} sends the deliveries itself "
               f"(see: obsctl webhooks deliveries)")
    elif verbose and (report.attempted or report.expired):
        notice(f"webhooks: {report.delivered} delivered, {report.retrying} will be retried, "
               f"{failed} failed" + (f"; last error: {report.last_error}" if report.last_error else "")
               + " (see: obsctl webhooks deliveries)")
    if exit_code and body["fired"]:
        raise typer.Exit(EXIT_FIRED)


def _print_fired(body: dict) -> None:
    """One line per rule that fired or was resolved (cron mails what is printed)."""
    for result in body["results"]:
        head = f"{result['status'].upper()} {result.get('alert_id')} {result['name']}: {result['metric']} = "
        condition = f"{result['operator']} {_num(result['threshold'])}"
        if result["status"] == "fired":
            typer.echo(f"{head}{_num(result['value'])} {condition}")
        elif result["status"] == "resolved":
            typer.echo(f"{head}{_num(result['value'])}, no longer {condition}")
        elif result["status"] == "would_fire":
            typer.echo(f"WOULD FIRE {result['name']}: {result['metric']} = {_num(result['value'])} {condition}")
        elif result["status"] == "would_resolve":
            typer.echo(f"WOULD RESOLVE {result['name']}: {result['metric']} = {_num(result['value'])}, "
                       f"no longer {condition}")


@app.command("events")
def events(
    ctx: typer.Context,
    unacknowledged: bool = typer.Option(False, "--unacknowledged", help="Only alerts not yet acknowledged."),
    rule_id: str | None = typer.Option(None, "--rule-id", help="Only this rule's alerts."),
    limit: int = int_option(alerts.EVENTS_LIMIT, "--limit", help="Alerts to show."),
    json_: JsonFlag = False,
) -> None:
    """List fired alerts, newest first.

    Example: obsctl alerts events --unacknowledged
    """
    data = run(ctx, alerts.list_alert_events, limit=limit, unacknowledged=unacknowledged,
               rule_id=rule_id)
    show(data, json_, lambda d: _show_alerts(f"{len(d['events'])} of {plural(d['total'], 'alert')}",
                                             d["events"]))


def _show_alerts(title: str, events: list[dict]) -> None:
    rows = [[e["alert_id"], e["fired_at"], e["rule_name"], e["metric"], _num(e["value"]),
             f"{e['operator']} {_num(e['threshold'])}", e["agent_filter"] or "*",
             e["acknowledged_at"] or "no", e["resolved_at"] or "firing"] for e in events]
    render_table(title, ["alert_id", "fired_at", "rule", "metric", "value", "condition", "agent",
                         "acknowledged", "resolved"], rows)


@app.command("ack")
def ack(ctx: typer.Context, alert_id: str = typer.Argument(..., help="Alert id."),
        json_: JsonFlag = False) -> None:
    """Acknowledge a fired alert (again is fine: the first time is kept).

    Example: obsctl alerts ack alert_0123456789abcdef
    """
    from obsctl.services.webhooks.delivery import deliver_due

    alert = run(ctx, alerts.acknowledge_alert, alert_id, opening="existing")
    show(alert, json_, lambda a: _show_alerts("acknowledged", [a]))
    # The webhooks hear of the acknowledgement now (a server sends them itself); a delivery
    # that fails stays queued for the next `alerts evaluate`.
    run(ctx, deliver_due, settings_of(ctx), opening="existing")
