"""Webhooks: CRUD, secrets, SSRF rules, payload formats and signatures (API, CLI, service)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from obsctl.errors import InvalidInput, NotFound
from obsctl.services import alerts, webhooks
from obsctl.services.alerts import rules as alert_rules
from obsctl.services.ingest import ingest_events
from obsctl.services.webhooks.delivery import deliver_due, request_headers, sign
from obsctl.services.webhooks.url_safety import UnsafeDestination, address_problem, check_destination
from tests.conftest import event
from tests.webhook_receiver import Receiver

AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
PUBLIC = "https://93.184.215.14/hook"  # a literal public address: no DNS needed
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def fire_one(db, settings, **rule_fields) -> dict:
    """Ingest an error at 11:59 and evaluate an error_rate rule at 12:00: one alert fires."""
    ingest_events(db, [event("s", "error", agent_name="alpha", timestamp="2026-01-01T11:59:00Z")])
    rule = alert_rules.create_rule(db, {"name": "errors", "metric": "error_rate", "operator": ">",
                                        "threshold": 10, **rule_fields})
    body = alerts.evaluate_alerts(db, settings, at=AT)
    assert body["fired"] == 1
    return rule


# --- CRUD ---------------------------------------------------------------------------------

def test_create_generates_a_secret_shown_only_once(db, settings):
    hook = webhooks.create_webhook(db, settings, {"url": PUBLIC, "secret": "generate"})
    assert hook["secret"].startswith("whsec_") and hook["has_secret"] is True
    assert Webhook(hook["secret"])  # the independent library accepts it
    assert hook["format"] == "generic" and hook["rule_ids"] == [] and hook["enabled"] is True
    listed = webhooks.list_webhooks(db)["webhooks"][0]
    assert "secret" not in listed and listed["has_secret"] is True
    assert "secret" not in webhooks.get_webhook(db, hook["webhook_id"])


def test_create_without_secret_is_unsigned(db, settings):
    hook = webhooks.create_webhook(db, settings, {"url": PUBLIC})
    assert hook["secret"] is None and hook["has_secret"] is False


@pytest.mark.parametrize("body, fragment", [
    ({}, "missing required webhook field: url"),
    ({"url": "ftp://93.184.215.14/x"}, "url must start with http:// or https://"),
    ({"url": "http:///path"}, "url has no host"),
    ({"url": PUBLIC, "format": "teams"}, "format must be one of generic, slack, pagerduty"),
    ({"url": PUBLIC, "format": {}}, "format must be one of"),
    ({"url": {"x": 1}}, "url must be a non-empty string"),
    ({"url": PUBLIC, "secret": "hunter2"}, "secret must be 'generate' or a Standard Webhooks secret"),
    ({"url": PUBLIC, "secret": "whsec_!!!"}, "is not base64"),
    ({"url": PUBLIC, "secret": "whsec_c2hvcnQ="}, "it decodes to 5 bytes"),
    ({"url": PUBLIC, "format": "pagerduty"}, "a pagerduty webhook needs a routing_key"),
    ({"url": PUBLIC, "routing_key": "abc"}, "routing_key only applies to format pagerduty"),
    ({"url": PUBLIC, "rule_ids": ["rule_missing"]}, "alert rule 'rule_missing' does not exist"),
    ({"url": PUBLIC, "rule_ids": "r1"}, "rule_ids must be an array"),
    ({"url": PUBLIC, "enabled": "no"}, "enabled must be true or false"),
    ({"url": PUBLIC, "colour": 1}, "unknown webhook field 'colour'"),
])
def test_create_validation(db, settings, body, fragment):
    with pytest.raises(InvalidInput) as info:
        webhooks.create_webhook(db, settings, body)
    assert fragment in info.value.message


def test_update_and_delete(db, settings):
    rule = alert_rules.create_rule(db, {"name": "r", "metric": "error_rate", "operator": ">", "threshold": 1})
    hook = webhooks.create_webhook(db, settings, {"url": PUBLIC})
    updated = webhooks.update_webhook(db, settings, hook["webhook_id"], {
        "format": "pagerduty", "routing_key": "R0UTINGKEY", "rule_ids": [rule["rule_id"]],
        "enabled": False, "secret": SECRET})
    assert (updated["format"], updated["rule_ids"], updated["enabled"]) == ("pagerduty", [rule["rule_id"]], False)
    assert updated["secret"] == SECRET and updated["routing_key"] == "R0UTINGKEY"
    listed = webhooks.get_webhook(db, hook["webhook_id"])
    assert listed["has_routing_key"] is True and "routing_key" not in listed
    with pytest.raises(InvalidInput, match="needs a routing_key"):
        webhooks.update_webhook(db, settings, hook["webhook_id"], {"routing_key": None})
    assert webhooks.delete_webhook(db, hook["webhook_id"]) == {"deleted": True,
                                                               "webhook_id": hook["webhook_id"]}
    with pytest.raises(NotFound):
        webhooks.update_webhook(db, settings, hook["webhook_id"], {"enabled": True})


# --- SSRF ---------------------------------------------------------------------------------

@pytest.mark.parametrize("address", ["169.254.169.254", "169.254.170.2", "fe80::1", "100.100.100.200",
                                     "fd00:ec2::254", "0.0.0.0", "224.0.0.1", "::ffff:169.254.169.254"])
def test_link_local_and_metadata_are_always_refused(address):
    assert address_problem(address, allow_private=True) is not None


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "10.1.2.3", "192.168.0.10", "172.16.5.5",
                                     "fc00::1", "100.64.0.1", "::ffff:127.0.0.1"])
def test_loopback_and_private_need_the_setting(address):
    assert "OBSCTL_WEBHOOK_ALLOW_PRIVATE=1" in address_problem(address, allow_private=False)
    assert address_problem(address, allow_private=True) is None


def test_public_addresses_are_allowed():
    assert address_problem("93.184.215.14", allow_private=False) is None
    assert address_problem("2606:4700::1111", allow_private=False) is None


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]/x",
                                 "http://10.0.0.1/x", "http://169.254.169.254/latest/meta-data",
                                 "http://metadata.google.internal/computeMetadata/v1/"])
def test_create_refuses_private_and_metadata_urls(db, settings, url):
    with pytest.raises(UnsafeDestination):
        webhooks.create_webhook(db, settings, {"url": url})


def test_metadata_refused_even_when_private_allowed(db, private_ok):
    with pytest.raises(UnsafeDestination, match="link-local"):
        webhooks.create_webhook(db, private_ok, {"url": "http://169.254.169.254/"})
    assert webhooks.create_webhook(db, private_ok, {"url": "http://127.0.0.1:9/x"})["url"]


def test_a_host_that_does_not_resolve_is_checked_at_delivery(db, settings):
    check_destination("https://no-such-host.invalid/x", allow_private=False, require_resolution=False)


def test_the_private_decision_is_stored_with_the_webhook(db, private_ok, settings, receiver):
    # Saved through a process that allowed private addresses (a server); sent by one that
    # does not (a cron evaluate): the stored decision holds, the alert is delivered.
    hook = webhooks.create_webhook(db, private_ok, {"url": receiver.url})
    assert hook["allow_private"] is True
    fire_one(db, settings)
    report = deliver_due(db, settings, at=AT)
    assert (report.attempted, report.delivered) == (1, 1)
    assert len(receiver.accepted) == 1
    # A URL set again without the setting needs it again.
    with pytest.raises(UnsafeDestination, match="loopback"):
        webhooks.update_webhook(db, settings, hook["webhook_id"], {"url": receiver.url})
    assert webhooks.get_webhook(db, hook["webhook_id"])["allow_private"] is True


def test_a_private_destination_without_a_decision_stays_pending(db, private_ok, settings, receiver):
    # Stored before the decision was recorded (or DNS now answers a private address): the
    # sender's own setting decides, and without it the delivery waits, saying why.
    hook = webhooks.create_webhook(db, private_ok, {"url": receiver.url})
    with db.transaction():
        db.webhooks.update_webhook(hook["webhook_id"], {"allow_private": 0})
    fire_one(db, settings)
    report = deliver_due(db, settings, at=AT)
    assert (report.attempted, report.retrying, report.failed) == (1, 1, 0)
    (delivery,) = webhooks.list_deliveries(db)["deliveries"]
    assert delivery["status"] == "pending"
    assert delivery["last_error"] == ("refused for now: webhook host 127.0.0.1 is a loopback address "
                                      "(set OBSCTL_WEBHOOK_ALLOW_PRIVATE=1 to allow)")
    assert receiver.requests == []
    assert deliver_due(db, private_ok, at=AT + timedelta(seconds=1)).delivered == 1
    assert len(receiver.accepted) == 1


# --- payloads and signatures --------------------------------------------------------------

def test_generic_payload_signed_and_verified_with_standardwebhooks(db, private_ok, receiver):
    hook = webhooks.create_webhook(db, private_ok, {"url": receiver.url, "secret": "generate"})
    rule = fire_one(db, private_ok)
    deliver_due(db, private_ok, at=AT)
    assert len(receiver.accepted) == 1
    request = receiver.accepted[0]
    payload = Webhook(hook["secret"]).verify(request["body"], request["headers"])
    alert = alerts.list_alert_events(db)["events"][0]
    # What was failing in the rule's window: the one error of fire_one, in session s.
    (failing,) = payload["alert"].pop("failures")
    assert (failing["failures"], failing["sessions"], failing["session_ids"]) == (1, 1, ["s"])
    assert failing["title"].startswith("error - 1 failure, 1 session of alpha, 11:59-11:59 UTC")
    assert payload == {"type": "alert.fired", "alert": {**alert, "firing_since": alert["fired_at"]},
                       "rule": alert_rules.get_rule(db, rule["rule_id"])}
    delivery = webhooks.list_deliveries(db)["deliveries"][0]
    assert request["headers"]["webhook-id"] == delivery["delivery_id"]
    assert request["headers"]["Content-Type"] == "application/json"
    assert delivery["status"] == "delivered" and delivery["attempts"] == 1
    assert delivery["last_status_code"] == 200 and delivery["alert_id"] == alert["alert_id"]


def test_a_wrong_secret_fails_verification(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "secret": SECRET})
    fire_one(db, private_ok)
    deliver_due(db, private_ok, at=AT)
    request = receiver.accepted[0]
    Webhook(SECRET).verify(request["body"], request["headers"])
    with pytest.raises(Exception, match="No matching signature"):
        Webhook("whsec_" + "A" * 43 + "=").verify(request["body"], request["headers"])


def test_unsigned_webhook_sends_no_signature(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url})
    fire_one(db, private_ok)
    deliver_due(db, private_ok, at=AT)
    headers = receiver.accepted[0]["headers"]
    assert "webhook-signature" not in headers and headers["webhook-id"].startswith("msg_")


def test_signature_matches_the_standard_example():
    # The example of the Standard Webhooks specification (and of the reference libraries).
    body = b'{"test": 2432232314}'
    assert sign(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body) == (
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    headers = request_headers(SECRET, "msg_1", body)
    assert Webhook(SECRET).verify(body, headers) == {"test": 2432232314}


def test_slack_payload(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "slack"})
    fire_one(db, private_ok, agent_filter="alpha")
    deliver_due(db, private_ok, at=AT)
    payload = json.loads(receiver.accepted[0]["body"])
    assert payload["text"] == ("[obsctl] errors: error_rate = 100% &gt; 10% over the last 1 hour "
                               "for agent alpha")
    assert [b["type"] for b in payload["blocks"]] == ["header", "section", "section", "section", "context"]
    assert payload["blocks"][3]["text"]["text"].startswith("*Failing*\nSEV-3: error - 1 failure, 1 session")
    assert {"type": "mrkdwn", "text": "*Agent*\nalpha"} in payload["blocks"][2]["fields"]


def test_pagerduty_payload(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "pagerduty",
                                             "routing_key": "R0UTING"})
    rule = fire_one(db, private_ok)
    deliver_due(db, private_ok, at=AT)
    payload = json.loads(receiver.accepted[0]["body"])
    alert = alerts.list_alert_events(db)["events"][0]
    assert len(payload["payload"]["custom_details"].pop("failures")) == 1
    assert payload == {
        "routing_key": "R0UTING", "event_action": "trigger", "dedup_key": f"obsctl-{rule['rule_id']}",
        "client": "obsctl",
        "payload": {"summary": "[obsctl] errors: error_rate = 100 > 10 over the last 60 min",
                    "source": "obsctl/all-agents", "severity": "warning",
                    "timestamp": "2026-01-01T12:00:00.000Z", "component": "all-agents",
                    "group": "obsctl", "class": "error_rate",
                    "custom_details": {**alert, "firing_since": alert["fired_at"]}},
    }


def test_rule_ids_select_alerts_and_disabled_webhooks_get_none(db, private_ok, receiver):
    other = alert_rules.create_rule(db, {"name": "o", "metric": "error_rate", "operator": ">",
                                         "threshold": 1000})
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "rule_ids": [other["rule_id"]]})
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "enabled": False})
    everything = webhooks.create_webhook(db, private_ok, {"url": receiver.url})
    fire_one(db, private_ok)
    deliveries = webhooks.list_deliveries(db)
    assert deliveries["total"] == 1
    assert deliveries["deliveries"][0]["webhook_id"] == everything["webhook_id"]


def test_deleting_a_webhook_deletes_its_deliveries(db, private_ok):
    hook = webhooks.create_webhook(db, private_ok, {"url": "http://127.0.0.1:9/x"})
    fire_one(db, private_ok)
    assert webhooks.list_deliveries(db)["total"] == 1
    webhooks.delete_webhook(db, hook["webhook_id"])
    assert webhooks.list_deliveries(db)["total"] == 0


# --- HTTP ---------------------------------------------------------------------------------

def test_api_crud_and_test_send(make_app, receiver):
    client = make_app({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}).test_client()
    created = client.post("/webhooks", json={"url": receiver.url, "format": "slack", "secret": "generate"})
    assert created.status_code == 201
    hook = created.get_json()
    hook_id = hook["webhook_id"]
    listed = client.get("/webhooks").get_json()
    assert listed["total"] == 1 and "secret" not in listed["webhooks"][0]
    assert client.get(f"/webhooks/{hook_id}").get_json() == listed["webhooks"][0]

    sent = client.post(f"/webhooks/{hook_id}/test")
    assert sent.status_code == 200
    delivery = sent.get_json()
    assert (delivery["status"], delivery["last_status_code"], delivery["event_type"]) == (
        "delivered", 200, "webhook.test")
    request = receiver.accepted[0]
    assert Webhook(hook["secret"]).verify(request["body"], request["headers"])["text"].startswith(
        "[obsctl test]")
    log = client.get(f"/webhooks/deliveries?webhook_id={hook_id}").get_json()
    assert log == {"deliveries": [delivery], "total": 1}

    assert client.put(f"/webhooks/{hook_id}", json={"enabled": False}).get_json()["enabled"] is False
    assert client.delete(f"/webhooks/{hook_id}").get_json() == {"deleted": True, "webhook_id": hook_id}
    assert client.get(f"/webhooks/{hook_id}").status_code == 404
    assert client.post(f"/webhooks/{hook_id}/test").status_code == 404


def test_api_refuses_private_urls_by_default(client):
    response = client.post("/webhooks", json={"url": "http://127.0.0.1:8080/x"})
    assert response.status_code == 400
    assert "loopback" in response.get_json()["error"]


def test_api_test_send_to_a_receiver_that_is_down(make_app):
    client = make_app({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}).test_client()
    down = Receiver()  # never started
    hook_id = client.post("/webhooks", json={"url": down.url}).get_json()["webhook_id"]
    delivery = client.post(f"/webhooks/{hook_id}/test").get_json()
    assert delivery["status"] == "failed" and delivery["last_error"].startswith("connection failed")
    assert delivery["next_attempt_at"] is None


def test_api_deliveries_filters(client):
    assert client.get("/webhooks/deliveries?status=lost").status_code == 400
    assert client.get("/webhooks/deliveries?status=").status_code == 400
    assert client.get("/webhooks/deliveries?limit=abc").status_code == 400
    assert client.get("/webhooks/deliveries?status=pending").get_json() == {"deliveries": [], "total": 0}


# --- CLI ----------------------------------------------------------------------------------

def test_cli_add_list_test_deliveries_remove(cli, client, receiver):
    env = {"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}
    added = cli("webhooks", "add", receiver.url, "--secret", "generate", "--json", env=env)
    assert added.exit_code == 0, added.output
    hook = json.loads(added.stdout)
    assert hook["secret"].startswith("whsec_")

    table = cli("webhooks", "list").stdout.splitlines()
    assert table == ["webhook_id\turl\tformat\trules\tenabled\tsigned",
                     f"{hook['webhook_id']}\t{receiver.url}\tgeneric\t*\tyes\tyes"]
    assert json.loads(cli("webhooks", "list", "--json").stdout) == client.get("/webhooks").get_json()

    tested = cli("webhooks", "test", hook["webhook_id"], env=env)
    assert tested.exit_code == 0 and tested.stdout.startswith("delivered msg_")
    assert tested.stdout.endswith("(HTTP 200)\n")
    payload = Webhook(hook["secret"]).verify(receiver.accepted[0]["body"], receiver.accepted[0]["headers"])
    assert payload["type"] == "webhook.test"

    log = json.loads(cli("webhooks", "deliveries", "--json").stdout)
    assert log == client.get("/webhooks/deliveries").get_json() and log["total"] == 1

    receiver.mode = "fail"
    failed = cli("webhooks", "test", hook["webhook_id"], env=env)
    assert failed.exit_code == 1 and failed.stdout.startswith("failed msg_")
    assert "HTTP 500: receiver broken" in failed.stdout

    removed = cli("webhooks", "remove", hook["webhook_id"])
    assert removed.exit_code == 0 and removed.stderr == f"deleted webhook {hook['webhook_id']}\n"
    assert cli("webhooks", "remove", hook["webhook_id"]).exit_code == 1


def test_cli_enable_and_disable_together_is_a_usage_error(cli, client, receiver):
    env = {"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}
    hook = json.loads(cli("webhooks", "add", receiver.url, "--json", env=env).stdout)
    both = cli("webhooks", "update", hook["webhook_id"], "--enable", "--disable", env=env)
    assert both.exit_code == 2
    assert "Invalid value for '--enable' / '--disable': they contradict each other" in both.stderr
    assert client.get(f"/webhooks/{hook['webhook_id']}").get_json()["enabled"] is True
    off = cli("webhooks", "update", hook["webhook_id"], "--disable", "--json", env=env)
    assert json.loads(off.stdout)["enabled"] is False


def test_cli_add_refuses_private_without_the_setting(cli):
    result = cli("webhooks", "add", "http://127.0.0.1:9/x")
    assert result.exit_code == 1
    assert result.stderr == ("Error: webhook host 127.0.0.1 is a loopback address "
                             "(set OBSCTL_WEBHOOK_ALLOW_PRIVATE=1 to allow)\n")


# --- secrets in URLs are masked outside the call that set them -----------------------------

@pytest.mark.parametrize("url, masked", [
    ("https://hooks.slack.com/services/T0123ABCD/B0123ABCD/abcdEFGHijklMNOPqrstUVWX",
     "https://hooks.slack.com/services/***"),
    ("https://discord.com/api/webhooks/1234/tok-en", "https://discord.com/api/***"),
    ("https://example.com/hook", "https://example.com/hook"),
    ("https://example.com/", "https://example.com/"),
    ("https://example.com", "https://example.com"),
    ("https://example.com:8443/hook?token=s3cret&x=1", "https://example.com:8443/hook?token=***&x=***"),
    ("https://example.com/a3f9c2d8e7b6a5f4c3d2e1f0?bare", "https://example.com/***?***"),
    ("https://user:pass@example.com/hook", "https://***@example.com/hook"),  # stored by old versions
])
def test_mask_url(url, masked):
    assert webhooks.mask_url(url) == masked


def test_listings_mask_url_secrets_and_a_masked_url_sent_back_changes_nothing(make_app):
    client = make_app({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}).test_client()
    url = "http://127.0.0.1:9/services/T0123ABCD/B0123ABCD/abcdEFGHijklMNOPqrstUVWX?token=s3cret"
    created = client.post("/webhooks", json={"url": url, "format": "slack"}).get_json()
    assert created["url"] == url  # the call that set it shows it whole
    hook_id = created["webhook_id"]
    masked = "http://127.0.0.1:9/services/***?token=***"
    listed = client.get("/webhooks").get_json()["webhooks"][0]
    assert listed["url"] == masked and client.get(f"/webhooks/{hook_id}").get_json()["url"] == masked
    assert "s3cret" not in client.get("/webhooks").get_data(as_text=True)

    # A client that reads a webhook and writes it back does not overwrite the real URL.
    sent_back = {k: listed[k] for k in ("url", "format", "rule_ids", "enabled")}
    updated = client.put(f"/webhooks/{hook_id}", json=sent_back)
    assert updated.status_code == 200 and updated.get_json()["url"] == masked
    stored = client.application.extensions["obsctl"].store.webhooks.get_webhook(hook_id)
    assert stored["url"] == url

    new_url = "http://127.0.0.1:9/services/T1/B1/another-secret-token-1234"
    assert client.put(f"/webhooks/{hook_id}", json={"url": new_url}).get_json()["url"] == new_url
    assert client.get(f"/webhooks/{hook_id}").get_json()["url"] == "http://127.0.0.1:9/services/***"


def test_cli_list_masks_url_secrets(cli):
    env = {"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}
    url = "http://127.0.0.1:9/services/T0/B0/abcdEFGHijklMNOP1234"
    added = cli("webhooks", "add", url, "--format", "slack", env=env)
    assert url in added.stdout
    listed = cli("webhooks", "list")
    assert "abcdEFGH" not in listed.stdout and "http://127.0.0.1:9/services/***" in listed.stdout


# --- Slack: untrusted text is escaped and kept within Slack's limits -----------------------

def slack_texts(payload: dict) -> list[tuple[str, str]]:
    """(where, text) of every text in a Slack payload."""
    texts = [("text", payload["text"])]
    for block in payload["blocks"]:
        if "text" in block:
            texts.append((block["type"], block["text"]["text"]))
        texts += [("field", f["text"]) for f in block.get("fields", [])]
        texts += [("context", e["text"]) for e in block.get("elements", [])]
    return texts


def fire_for_agent(db, settings, rule_name: str, agent: str) -> None:
    """One alert whose rule name and agent are chosen by the caller (anyone sending events)."""
    ingest_events(db, [event("s", "error", agent_name=agent, timestamp="2026-01-01T11:59:00Z")])
    alert_rules.create_rule(db, {"name": rule_name, "metric": "error_rate", "operator": ">",
                                 "threshold": 10, "agent_filter": agent})
    assert alerts.evaluate_alerts(db, settings, at=AT)["fired"] == 1


def test_slack_text_from_rules_and_agents_is_escaped(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "slack"})
    fire_for_agent(db, private_ok, "<!channel> & <https://evil.example|click>", "> 5000 <@U123>")
    deliver_due(db, private_ok, at=AT)
    payload = json.loads(receiver.accepted[0]["body"])
    for where, text in slack_texts(payload):
        assert "<" not in text and ">" not in text, where
        assert "&" not in text.replace("&amp;", "").replace("&lt;", "").replace("&gt;", ""), where
    assert payload["blocks"][0]["text"]["text"] == (
        "Alert: &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;")
    assert {"type": "mrkdwn", "text": "*Agent*\n&gt; 5000 &lt;@U123&gt;"} in payload["blocks"][2]["fields"]
    assert {"type": "mrkdwn", "text": "*Condition*\n&gt; 10%"} in payload["blocks"][2]["fields"]


def test_slack_texts_stay_within_slack_limits(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "slack"})
    fire_for_agent(db, private_ok, "<" * 256, "&" * 256)
    deliver_due(db, private_ok, at=AT)
    payload = json.loads(receiver.accepted[0]["body"])
    limits = {"text": 3000, "header": 150, "section": 3000, "field": 2000, "context": 3000}
    for where, text in slack_texts(payload):
        assert 0 < len(text) <= limits[where], where
        assert re.fullmatch(r"([^&]|&amp;|&lt;|&gt;)*…?", text), where  # no escape cut in half
    header = payload["blocks"][0]["text"]["text"]
    assert len(header) <= 150 and header.endswith("…") and header.startswith("Alert: &lt;&lt;")


def _heavy_sessions(db) -> None:
    """In the hour before 12:00: h-1 spends 9,000 tokens (slowest event 400 ms), h-2 3,000 (its
    slowest 2,500 ms), h-3 1,000 (100 ms); h-old spent 50,000 before the window."""
    def call(sid, minute, tokens, ms, n):
        return event(sid, "llm_call", agent_name="alpha" if sid != "h-2" else "beta", model="gpt-4o",
                     tokens_in=tokens, duration_ms=ms, timestamp=f"2026-01-01T11:{minute:02d}:00Z",
                     event_id=f"{sid}-{n}")
    ingest_events(db, [call("h-1", 10, 4000, 400, 1), call("h-1", 20, 5000, 300, 2), call("h-2", 30, 3000, 2500, 1),
                       call("h-3", 40, 1000, 100, 1),
                       event("h-old", "llm_call", agent_name="alpha", tokens_in=50000,
                             timestamp="2026-01-01T10:30:00Z", event_id="h-old-1")])


def test_alerts_on_tokens_and_latency_name_the_sessions_that_weigh_most(db, private_ok, receiver):
    _heavy_sessions(db)
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "slack"})
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "pagerduty", "routing_key": "R0UTING"})
    alert_rules.create_rule(db, {"name": "tokens", "metric": "avg_tokens", "operator": ">", "threshold": 100})
    alert_rules.create_rule(db, {"name": "slow", "metric": "p95_duration_ms", "operator": ">", "threshold": 1000})
    assert alerts.evaluate_alerts(db, private_ok, at=AT)["fired"] == 2
    deliver_due(db, private_ok, at=AT)
    bodies = [json.loads(r["body"]) for r in receiver.accepted]
    paged = {b["payload"]["custom_details"]["rule_name"]: b["payload"]["custom_details"]["contributors"]
             for b in bodies if "routing_key" in b}
    tokens, slow = paged["tokens"], paged["slow"]
    assert (tokens["by"], [(s["session_id"], s["agent_name"], s["tokens"]) for s in tokens["sessions"]]) == (
        "tokens", [("h-1", "alpha", 9000), ("h-2", "beta", 3000), ("h-3", "alpha", 1000)])
    assert (slow["by"], [(s["session_id"], s["slowest_ms"]) for s in slow["sessions"]]) == (
        "slowest", [("h-2", 2500.0), ("h-1", 400.0), ("h-3", 100.0)])
    slack = [b for b in bodies if "blocks" in b]
    sections = [blk["text"]["text"] for b in slack for blk in b["blocks"] if blk["type"] == "section" and "text" in blk]
    assert any(t.startswith("*Sessions with the most tokens in the window*\nh-1 (alpha): 9,000 tokens") for t in sections)
    assert any(t.startswith("*Sessions with the slowest events in the window*\nh-2 (beta)") for t in sections)
