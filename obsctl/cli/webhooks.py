"""`obsctl webhooks`: where fired alerts are sent, test sends and the delivery log."""

from __future__ import annotations

from typing import Annotated

import typer

from obsctl.cli import completion
from obsctl.cli.base import EXIT_FAILURE, ObsTyper, notice, run, settings_of
from obsctl.cli.options import checked, int_option, on_off
from obsctl.cli.output import JsonFlag, render_table, show
from obsctl.services import webhooks as service
from obsctl.text import plural

app = ObsTyper(help="Webhooks called when alerts fire (generic JSON, Slack, PagerDuty).\n\n"
               "Example: obsctl webhooks add https://hooks.example.com/obsctl --secret generate")

_HEADERS = ["webhook_id", "url", "format", "rules", "enabled", "signed"]


def _row(hook: dict) -> list:
    return [hook["webhook_id"], hook["url"], hook["format"], ",".join(hook["rule_ids"]) or "*",
            "yes" if hook["enabled"] else "no", "yes" if hook["has_secret"] else "no"]


def _show_created(title: str, hook: dict) -> None:
    render_table(title, _HEADERS, [_row(hook)])
    if hook.get("secret"):
        notice(f"signing secret (shown only now): {hook['secret']}")


@app.command("add")
def add(
    ctx: typer.Context,
    url: str = typer.Argument(..., help="http(s) URL to POST alerts to."),
    format_: str = typer.Option("generic", "--format", autocompletion=completion.webhook_formats, callback=checked(service.check_format),
                                help="generic, slack or pagerduty."),
    secret: str | None = typer.Option(None, "--secret",
                                         help="whsec_<base64> to sign deliveries, or 'generate'."),
    routing_key: str | None = typer.Option(None, "--routing-key",
                                              help="PagerDuty integration key (format pagerduty)."),
    rules: Annotated[list[str] | None,
                     typer.Option("--rule", metavar="RULE_ID", help="Only this rule's alerts (repeatable).")] = None,
    disabled: bool = typer.Option(False, "--disabled", help="Create it disabled."),
    json_: JsonFlag = False,
) -> None:
    """Register a webhook; a secret given or generated here is shown only now.

    Example: obsctl webhooks add https://events.pagerduty.com/v2/enqueue --format pagerduty --routing-key KEY
    """
    body: dict = {"url": url, "format": format_}
    if secret is not None:
        body["secret"] = secret
    if routing_key is not None:
        body["routing_key"] = routing_key
    if rules:
        body["rule_ids"] = rules
    if disabled:
        body["enabled"] = False
    hook = run(ctx, service.create_webhook, settings_of(ctx), body, opening="create")
    show(hook, json_, lambda h: _show_created("webhook created", h))


@app.command("list")
def list_(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """List webhooks (secrets are never listed; credentials in URLs are masked with ***).

    Example: obsctl webhooks list
    """
    show(run(ctx, service.list_webhooks), json_, lambda data: render_table(
        plural(data["total"], "webhook"), _HEADERS, [_row(h) for h in data["webhooks"]]))


@app.command("update")
def update(
    ctx: typer.Context,
    webhook_id: str = typer.Argument(..., help="Webhook id."),
    url: str | None = typer.Option(None, "--url", help="New http(s) URL."),
    format_: str | None = typer.Option(None, "--format", autocompletion=completion.webhook_formats, callback=checked(service.check_format),
                                       help="generic, slack or pagerduty."),
    secret: str | None = typer.Option(None, "--secret", help="whsec_<base64>, 'generate' or 'none'."),
    routing_key: str | None = typer.Option(None, "--routing-key"),
    rules: Annotated[list[str] | None, typer.Option("--rule", metavar="RULE_ID", help="Only these rules (repeatable).")] = None,
    all_rules: bool = typer.Option(False, "--all-rules", help="Send every rule's alerts."),
    enable: bool = typer.Option(False, "--enable", help="Turn the webhook on."),
    disable: bool = typer.Option(False, "--disable", help="Turn the webhook off."),
    json_: JsonFlag = False,
) -> None:
    """Change some fields of a webhook.

    Example: obsctl webhooks update wh_0123456789abcdef --secret generate --disable
    """
    body: dict = {}
    enabled = on_off(enable, disable, "webhook")
    for key, value in (("url", url), ("format", format_), ("routing_key", routing_key),
                       ("enabled", enabled)):
        if value is not None:
            body[key] = value
    if secret is not None:
        body["secret"] = None if secret == "none" else secret
    if all_rules:
        body["rule_ids"] = []
    elif rules:
        body["rule_ids"] = rules
    hook = run(ctx, service.update_webhook, settings_of(ctx), webhook_id, body, opening="existing")
    show(hook, json_, lambda h: _show_created("webhook updated", h))


@app.command("remove")
def remove(ctx: typer.Context, webhook_id: str = typer.Argument(..., help="Webhook id."),
           json_: JsonFlag = False) -> None:
    """Delete a webhook and its delivery log (pending deliveries are not sent).

    Example: obsctl webhooks remove wh_0123456789abcdef
    """
    show(run(ctx, service.delete_webhook, webhook_id, opening="existing"), json_,
         lambda _: notice(f"deleted webhook {webhook_id}"))


@app.command("test")
def test(ctx: typer.Context, webhook_id: str = typer.Argument(..., help="Webhook id."),
         json_: JsonFlag = False) -> None:
    """Send a sample alert to a webhook now; exit 1 if it was not delivered.

    Example: obsctl webhooks test wh_0123456789abcdef
    """
    delivery = run(ctx, service.send_webhook_test, settings_of(ctx), webhook_id, opening="existing")
    show(delivery, json_, _print_test)
    if delivery["status"] != "delivered":
        raise typer.Exit(EXIT_FAILURE)


def _print_test(delivery: dict) -> None:
    if delivery["status"] == "delivered":
        typer.echo(f"delivered {delivery['delivery_id']} (HTTP {delivery['last_status_code']})")
    else:
        typer.echo(f"{delivery['status']} {delivery['delivery_id']}: {delivery['last_error']}")


@app.command("retry")
def retry(ctx: typer.Context, delivery_id: str = typer.Argument(..., help="Delivery id (see `webhooks deliveries --status failed`)."),
          json_: JsonFlag = False) -> None:
    """Attempt a failed delivery once more, now; exit 1 if it was not delivered.

    A retry that fails again returns to the automatic retries while the delivery is younger
    than 24 hours. Only failed deliveries of enabled webhooks can be retried.

    Example: obsctl webhooks retry msg_0123456789abcdef0123456789abcdef
    """
    delivery = run(ctx, service.retry_delivery, settings_of(ctx), delivery_id, opening="existing")
    show(delivery, json_, _print_test)
    if delivery["status"] != "delivered":
        raise typer.Exit(EXIT_FAILURE)


@app.command("deliveries")
def deliveries(
    ctx: typer.Context,
    webhook_id: str | None = typer.Option(None, "--webhook", help="Only this webhook."),
    alert_id: str | None = typer.Option(None, "--alert", help="Only this alert's deliveries."),
    status: str | None = typer.Option(None, "--status", autocompletion=completion.delivery_statuses, callback=checked(service.check_delivery_status),
                                      help="pending, delivered or failed."),
    limit: int = int_option(service.DELIVERIES_LIMIT, "--limit", help="Deliveries to show."),
    json_: JsonFlag = False,
) -> None:
    """Show the delivery log: status, attempts and last error of each delivery.

    Example: obsctl webhooks deliveries --status pending
    """
    show(run(ctx, service.list_deliveries, webhook_id=webhook_id, status=status, alert_id=alert_id,
             limit=limit), json_, _show_deliveries)


def _show_deliveries(data: dict) -> None:
    rows = [[d["delivery_id"], d["webhook_id"], d["alert_id"], d["event_type"], d["status"],
             d["attempts"], d["last_status_code"], d["last_error"], d["next_attempt_at"],
             d["created_at"]] for d in data["deliveries"]]
    render_table(f"{len(rows)} of {plural(data['total'], 'delivery', 'deliveries')}",
                 ["delivery_id", "webhook", "alert", "type", "status", "attempts", "code", "last_error",
                  "next_attempt", "created_at"], rows)
