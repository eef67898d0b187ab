"""Alerts and webhooks through a server: every read prints what it prints on the database
itself, errors included; rules, alerts and webhooks changed through the server are changed in
the database, and the commands that change them print what they print locally, but for the
ids and times they generate.

The module's tests share one database (the `remote` fixture), so each makes what it needs
under a name of its own. Rules are made disabled or without cooldown, and disabled again by
the tests that enable them, so that `alerts evaluate` fires the same rules both ways whatever
ran before. Webhooks are made disabled or scoped to one rule, so no evaluation queues a
delivery to an address that does not answer; the server runs without
OBSCTL_WEBHOOK_ALLOW_PRIVATE, so a webhook to the local receiver is made on the database
(with the setting, which is stored with the webhook) and used through the server.
"""

from __future__ import annotations

import json
import re
import time
import uuid

import pytest

from obsctl.models.alerts import MAX_NAME_LEN
from tests.webhook_receiver import Receiver

PUBLIC = "https://93.184.215.14/hook"  # a literal public address: accepted, no DNS needed
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ALLOW_PRIVATE = {"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}
# A rule that fires on the demo data whenever it is evaluated: it has errors, all of them well
# inside a 30-day window, and no cooldown.
FIRING = ("--metric", "error_rate", "--operator", ">", "--threshold", "0", "--window-minutes", "43200",
          "--cooldown-minutes", "0")
# What a command generates, and so differs between two runs: ids and times.
_GENERATED = re.compile(rb"\b(rule|alert|wh|msg)_[0-9a-f]{16,32}\b"
                        rb"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _ok_json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _generic(data: bytes | str) -> bytes:
    data = data.encode() if isinstance(data, str) else data
    return _GENERATED.sub(lambda m: (m.group(1) or b"time") + b"_*", data)


def _both(remote, local_args: tuple[str, ...], remote_args: tuple[str, ...] | None = None, **kw):
    """Run a command that changes data locally and through the server (on different objects
    when the ids differ); assert the same exit code and output but for generated ids/times."""
    here = remote.local(*local_args, **kw)
    there = remote.remote(*(remote_args or local_args), **kw)
    assert there.exit_code == here.exit_code, (here.output, there.output)
    assert _generic(there.stdout_bytes) == _generic(here.stdout_bytes)
    assert _generic(there.stderr) == _generic(here.stderr)
    return here, there


def _add_rule(remote, *options: str, name: str | None = None) -> dict:
    """A rule made on the database (disabled unless FIRING options say otherwise)."""
    options = options or ("--metric", "error_rate", "--operator", ">", "--threshold", "5", "--disabled")
    return _ok_json(remote.local("alerts", "rules", "add", "--name", name or _unique("rule"), *options,
                                 "--json"))


def _disable(remote, rule_id: str) -> None:
    assert remote.local("alerts", "rules", "update", rule_id, "--disable").exit_code == 0


def _rule(remote, rule_id: str) -> dict | None:
    rules = _ok_json(remote.local("alerts", "rules", "list", "--json"))["rules"]
    return next((r for r in rules if r["rule_id"] == rule_id), None)


def _webhook(remote, webhook_id: str) -> dict | None:
    hooks = _ok_json(remote.local("webhooks", "list", "--json"))["webhooks"]
    return next((h for h in hooks if h["webhook_id"] == webhook_id), None)


def _events(remote, rule_id: str) -> list[dict]:
    return _ok_json(remote.local("alerts", "events", "--rule-id", rule_id, "--json"))["events"]


@pytest.fixture(scope="module")
def receiver():
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture(scope="module")
def seeded(remote, receiver) -> dict:
    """Something for every read to show, and for every filter to leave out: two rules with two
    alerts each (the older one acknowledged), two webhooks with a delivered test send each."""
    rule, other = _add_rule(remote, *FIRING), _add_rule(remote, *FIRING)
    try:
        for _ in range(2):
            assert remote.local("alerts", "evaluate").exit_code == 0
    finally:
        _disable(remote, rule["rule_id"])
        _disable(remote, other["rule_id"])
    alerts = _events(remote, rule["rule_id"])
    assert remote.local("alerts", "ack", alerts[-1]["alert_id"]).exit_code == 0
    hooks = [_ok_json(remote.local("webhooks", "add", receiver.url, "--rule", rule_id, "--disabled", "--json",
                                   env=ALLOW_PRIVATE)) for rule_id in (rule["rule_id"], other["rule_id"])]
    for hook in hooks:
        assert remote.local("webhooks", "test", hook["webhook_id"]).exit_code == 0
    return {"rule": rule["rule_id"], "alert": alerts[0]["alert_id"], "webhook": hooks[0]["webhook_id"]}


# --- reads --------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("alerts", "rules", "list"),
    ("alerts", "rules", "list", "--json"),
    ("alerts", "events"),
    ("alerts", "events", "--json"),
    ("alerts", "events", "--unacknowledged", "--limit", "3", "--json"),
    ("alerts", "events", "--limit", "1000", "--json"),  # capped at 500 both ways
    ("alerts", "events", "--rule-id", "{rule}"),
    ("alerts", "events", "--rule-id", "{rule}", "--unacknowledged", "--json"),
    ("webhooks", "list"),
    ("webhooks", "list", "--json"),
    ("webhooks", "deliveries"),
    ("webhooks", "deliveries", "--json"),
    ("webhooks", "deliveries", "--webhook", "{webhook}", "--status", "delivered", "--limit", "5", "--json"),
    ("webhooks", "deliveries", "--alert", "{alert}", "--json"),
])
def test_reads_print_the_same(remote, seeded, args):
    result = remote.same(*(arg.format(**seeded) for arg in args))
    assert result.exit_code == 0 and result.stdout


def test_the_reads_show_the_seeded_data(remote, seeded):
    # The reads above compare something: each seeded object is there, through the server.
    assert any(r["rule_id"] == seeded["rule"]
               for r in _ok_json(remote.remote("alerts", "rules", "list", "--json"))["rules"])
    events = _ok_json(remote.remote("alerts", "events", "--rule-id", seeded["rule"], "--json"))
    assert events["total"] == 2 and [e["acknowledged"] for e in events["events"]] == [False, True]
    unacked = _ok_json(remote.remote("alerts", "events", "--rule-id", seeded["rule"], "--unacknowledged",
                                     "--json"))
    assert [e["alert_id"] for e in unacked["events"]] == [seeded["alert"]]
    log = _ok_json(remote.remote("webhooks", "deliveries", "--webhook", seeded["webhook"], "--json"))
    assert log["total"] == 1 and log["deliveries"][0]["status"] == "delivered"


# --- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("alerts", "rules", "update", "rule_0000000000000000", "--threshold", "3"),
    ("alerts", "rules", "update", "rule_0000000000000000", "--json"),
    ("alerts", "rules", "remove", "rule_0000000000000000"),
    ("alerts", "rules", "add", "--name", "x" * (MAX_NAME_LEN + 1), "--metric", "error_rate",
     "--operator", ">", "--threshold", "1"),
    ("alerts", "rules", "add", "--name", " ", "--metric", "error_rate", "--operator", ">",
     "--threshold", "1", "--json"),
    ("alerts", "ack", "alert_0000000000000000"),
    ("alerts", "ack", "alert_0000000000000000", "--json"),
    ("webhooks", "add", "http://127.0.0.1:9/x"),
    ("webhooks", "add", "http://169.254.169.254/", "--json"),
    ("webhooks", "add", PUBLIC, "--rule", "rule_0000000000000000"),
    ("webhooks", "add", PUBLIC, "--format", "pagerduty"),
    ("webhooks", "add", PUBLIC, "--secret", "not-a-secret"),
    ("webhooks", "update", "wh_0000000000000000", "--disable"),
    ("webhooks", "remove", "wh_0000000000000000"),
    ("webhooks", "test", "wh_0000000000000000"),
    ("webhooks", "retry", "msg_00000000000000000000000000000000"),
    ("webhooks", "retry", "msg_00000000000000000000000000000000", "--json"),
])
def test_errors_are_the_same_message_and_exit_code(remote, args):
    result = remote.same(*args)
    assert result.exit_code == 1 and result.stderr.startswith("Error: ") and not result.stdout


def test_an_invalid_update_of_a_rule_is_refused_the_same_and_changes_nothing(remote):
    rule = _add_rule(remote)
    result = remote.same("alerts", "rules", "update", rule["rule_id"], "--name", "y" * (MAX_NAME_LEN + 1))
    assert result.exit_code == 1 and f"at most {MAX_NAME_LEN} characters" in result.stderr
    assert _rule(remote, rule["rule_id"]) == rule


def test_a_failed_delivery_is_retried_through_the_server_as_on_the_database(remote, seeded):
    test_send = _ok_json(remote.local("webhooks", "deliveries", "--webhook", seeded["webhook"], "--json"))
    refused = remote.same("webhooks", "retry", test_send["deliveries"][0]["delivery_id"])
    assert refused.exit_code == 1 and "is a test send, which is not retried" in refused.stderr

    gone = Receiver(mode="gone").start()  # 410: the delivery fails at once, the webhook is disabled
    try:
        rule = _add_rule(remote, *FIRING)
        hook = _ok_json(remote.local("webhooks", "add", gone.url, "--rule", rule["rule_id"], "--json",
                                     env=ALLOW_PRIVATE))
        try:
            assert remote.local("alerts", "evaluate").exit_code == 0
        finally:
            _disable(remote, rule["rule_id"])
        [failed] = _ok_json(remote.local("webhooks", "deliveries", "--webhook", hook["webhook_id"],
                                         "--json"))["deliveries"]
        assert failed["status"] == "failed" and failed["last_status_code"] == 410
        disabled = remote.same("webhooks", "retry", failed["delivery_id"])
        assert disabled.exit_code == 1 and f"webhook {hook['webhook_id']} is disabled" in disabled.stderr
        assert remote.local("webhooks", "update", hook["webhook_id"], "--enable").exit_code == 0
        gone.mode = "ok"
        there = remote.remote("webhooks", "retry", failed["delivery_id"], "--json")
        retried = _ok_json(there)
        assert (retried["status"], retried["attempts"], retried["last_status_code"]) == ("delivered", 2, 200)
        assert len(gone.accepted) == 1
        assert _ok_json(remote.local("webhooks", "deliveries", "--webhook", hook["webhook_id"],
                                     "--json"))["deliveries"] == [retried]
    finally:
        gone.stop()


def test_a_private_webhook_url_is_the_servers_decision(remote):
    # The setting of the command's own environment does not apply to the server's data.
    here = remote.local("webhooks", "add", "http://127.0.0.1:9/x", "--disabled", "--json", env=ALLOW_PRIVATE)
    assert here.exit_code == 0 and json.loads(here.stdout)["allow_private"] is True
    there = remote.remote("webhooks", "add", "http://127.0.0.1:9/x", "--disabled", env=ALLOW_PRIVATE)
    assert there.exit_code == 1
    assert there.stderr == ("Error: webhook host 127.0.0.1 is a loopback address "
                            "(set OBSCTL_WEBHOOK_ALLOW_PRIVATE=1 to allow)\n")


# --- alert rules --------------------------------------------------------------------------

@pytest.mark.parametrize("json_", [(), ("--json",)])
def test_add_rule(remote, json_):
    name = _unique("added")
    args = ("alerts", "rules", "add", "--name", name, "--metric", "p95_duration_ms", "--operator", "ge",
            "--threshold", "2500.5", "--window-minutes", "15", "--cooldown-minutes", "0",
            "--agent-filter", "support-bot", "--disabled", *json_)
    here, there = _both(remote, args)
    assert here.exit_code == 0 and name in here.stdout
    if json_:
        created = json.loads(there.stdout)
        assert _rule(remote, created["rule_id"]) == created
        assert created["rule_id"] != json.loads(here.stdout)["rule_id"]
    else:
        (rule_id,) = re.findall(r"rule_[0-9a-f]{16}", there.stdout)
        rule = _rule(remote, rule_id)
        assert (rule["name"], rule["operator"], rule["threshold"], rule["enabled"]) == (name, ">=", 2500.5, False)


@pytest.mark.parametrize("json_", [(), ("--json",)])
def test_update_rule(remote, json_):
    a, b = _add_rule(remote), _add_rule(remote)
    change = ("--name", _unique("renamed"), "--metric", "avg_tokens", "--operator", "<", "--threshold", "7",
              "--window-minutes", "90", "--cooldown-minutes", "1", "--agent-filter", "ops-bot", *json_)
    here, there = _both(remote, ("alerts", "rules", "update", a["rule_id"], *change),
                        ("alerts", "rules", "update", b["rule_id"], *change))
    assert here.exit_code == 0 and "renamed" in there.stdout
    rule = _rule(remote, b["rule_id"])
    assert (rule["metric"], rule["operator"], rule["threshold"], rule["window_minutes"], rule["cooldown_minutes"],
            rule["agent_filter"], rule["enabled"]) == ("avg_tokens", "<", 7, 90, 1, "ops-bot", False)
    # An empty agent filter clears it; --enable / --disable turn the rule on and off.
    cleared = _ok_json(remote.remote("alerts", "rules", "update", b["rule_id"], "--agent-filter", "",
                                     "--enable", "--json"))
    assert cleared["agent_filter"] is None and cleared["enabled"] is True
    _disable(remote, b["rule_id"])
    assert _rule(remote, b["rule_id"])["enabled"] is False


@pytest.mark.parametrize("json_", [(), ("--json",)])
def test_remove_rule(remote, json_):
    a, b = _add_rule(remote), _add_rule(remote)
    here, there = _both(remote, ("alerts", "rules", "remove", a["rule_id"], *json_),
                        ("alerts", "rules", "remove", b["rule_id"], *json_))
    assert here.exit_code == 0
    assert (there.stdout if json_ else there.stderr).count(b["rule_id"]) == 1
    assert _rule(remote, b["rule_id"]) is None and _rule(remote, a["rule_id"]) is None
    again = remote.remote("alerts", "rules", "remove", b["rule_id"])
    assert again.exit_code == 1 and again.stderr == f"Error: alert rule {b['rule_id']!r} not found\n"


# --- evaluation and alert events ----------------------------------------------------------

@pytest.mark.parametrize("json_", [(), ("--json",)])
def test_evaluate_exit_code_3_both_ways_when_a_rule_fires(remote, json_):
    rule = _add_rule(remote, *FIRING)
    try:
        here, there = _both(remote, ("alerts", "evaluate", "--exit-code", *json_))
    finally:
        _disable(remote, rule["rule_id"])
    assert here.exit_code == 3
    if json_:
        result = next(r for r in json.loads(there.stdout)["results"] if r["rule_id"] == rule["rule_id"])
        assert result["status"] == "fired"
    else:
        assert f"{rule['name']}: error_rate = " in there.stdout and there.stdout.startswith("FIRED alert_")
    # Each run fired the rule once, the server's run in the database too.
    fired = {e["alert_id"] for e in _events(remote, rule["rule_id"])}
    assert len(fired) == 2 and any(alert_id in there.stdout for alert_id in fired)


def test_evaluate_without_exit_code_exits_0_both_ways(remote):
    rule = _add_rule(remote, *FIRING)
    quiet = _add_rule(remote, "--metric", "error_rate", "--operator", ">", "--threshold", "1000000",
                      "--window-minutes", "43200")
    try:
        here, there = _both(remote, ("alerts", "evaluate", "--json"))
    finally:
        _disable(remote, rule["rule_id"])
        _disable(remote, quiet["rule_id"])
    assert here.exit_code == 0
    statuses = {r["rule_id"]: r["status"] for r in json.loads(there.stdout)["results"]}
    assert (statuses[rule["rule_id"]], statuses[quiet["rule_id"]]) == ("fired", "ok")
    assert len(_events(remote, rule["rule_id"])) == 2 and _events(remote, quiet["rule_id"]) == []


def test_remote_evaluate_has_the_server_deliver_the_webhooks(remote):
    rule = _add_rule(remote, *FIRING)
    receiver = Receiver().start()
    hook = _ok_json(remote.local("webhooks", "add", receiver.url, "--rule", rule["rule_id"], "--json",
                                 env=ALLOW_PRIVATE))
    try:
        result = remote.remote("alerts", "evaluate", "--json", "--verbose")
        assert result.exit_code == 0
        assert result.stderr == (f"webhooks: the server at {remote.url} sends the deliveries itself "
                                 f"(see: obsctl webhooks deliveries)\n")
        (alert_id,) = [r["alert_id"] for r in json.loads(result.stdout)["results"]
                       if r["rule_id"] == rule["rule_id"]]
        assert receiver.wait_for(1), "the server sent no delivery"
        assert json.loads(receiver.accepted[0]["body"])["alert"]["alert_id"] == alert_id
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            log = _ok_json(remote.local("webhooks", "deliveries", "--alert", alert_id, "--json"))
            if log["deliveries"] and log["deliveries"][0]["status"] == "delivered":
                break
            time.sleep(0.05)
        assert log["total"] == 1 and log["deliveries"][0]["status"] == "delivered"
    finally:
        _disable(remote, rule["rule_id"])
        remote.local("webhooks", "remove", hook["webhook_id"])
        receiver.stop()


@pytest.mark.parametrize("json_", [(), ("--json",)])
def test_ack(remote, json_):
    rule = _add_rule(remote, *FIRING)
    try:
        for _ in range(2):
            assert remote.local("alerts", "evaluate").exit_code == 0
    finally:
        _disable(remote, rule["rule_id"])
    first, second = (e["alert_id"] for e in _events(remote, rule["rule_id"]))
    here, there = _both(remote, ("alerts", "ack", first, *json_), ("alerts", "ack", second, *json_))
    assert here.exit_code == 0 and second in there.stdout
    acked = {e["alert_id"]: e for e in _events(remote, rule["rule_id"])}
    assert acked[second]["acknowledged"] is True and acked[second]["acknowledged_at"]
    # Again is fine, and keeps the first time.
    again = _ok_json(remote.remote("alerts", "ack", second, "--json"))
    assert again["acknowledged_at"] == acked[second]["acknowledged_at"]
    unacked = _ok_json(remote.local("alerts", "events", "--rule-id", rule["rule_id"], "--unacknowledged",
                                    "--json"))
    assert unacked["total"] == 0


# --- webhooks -----------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    ("--disabled",),
    ("--disabled", "--json"),
    ("--disabled", "--format", "slack", "--secret", SECRET),
    ("--disabled", "--format", "pagerduty", "--routing-key", "R0UT1NGKEY", "--secret", SECRET, "--json"),
])
def test_add_webhook(remote, options):
    url = f"https://93.184.215.14/{_unique('add')}"  # the listing masks later segments
    here, there = _both(remote, ("webhooks", "add", url, *options))
    assert here.exit_code == 0 and url in there.stdout
    assert (SECRET in there.stdout + there.stderr) == (SECRET in options)
    (webhook_id,) = set(re.findall(r"wh_[0-9a-f]{16}", there.stdout))
    hook = _webhook(remote, webhook_id)
    assert hook["url"] == url and hook["enabled"] is False and hook["has_secret"] == (SECRET in options)
    assert hook["format"] == ("pagerduty" if "pagerduty" in options else "slack" if "slack" in options
                              else "generic")


def test_add_webhook_for_some_rules(remote):
    rule = _add_rule(remote)
    here, there = _both(remote, ("webhooks", "add", PUBLIC, "--rule", rule["rule_id"], "--disabled", "--json"))
    created = _ok_json(there)
    assert created["rule_ids"] == [rule["rule_id"]] and _webhook(remote, created["webhook_id"]) is not None


@pytest.mark.parametrize("json_", [(), ("--json",)])
def test_update_webhook(remote, json_):
    rule = _add_rule(remote)
    a, b = (_ok_json(remote.local("webhooks", "add", PUBLIC, "--disabled", "--json")) for _ in range(2))
    url = f"https://93.184.215.14/{_unique('moved')}"
    change = ("--url", url, "--format", "pagerduty", "--routing-key", "R0UT1NGKEY", "--secret", SECRET,
              "--rule", rule["rule_id"], *json_)
    here, there = _both(remote, ("webhooks", "update", a["webhook_id"], *change),
                        ("webhooks", "update", b["webhook_id"], *change))
    assert here.exit_code == 0 and url in there.stdout
    hook = _webhook(remote, b["webhook_id"])
    assert (hook["url"], hook["format"], hook["has_secret"], hook["rule_ids"], hook["enabled"]) == (
        url, "pagerduty", True, [rule["rule_id"]], False)
    # Back to every rule, unsigned.
    back = _ok_json(remote.remote("webhooks", "update", b["webhook_id"], "--all-rules", "--secret", "none",
                                  "--json"))
    assert back["rule_ids"] == [] and back["has_secret"] is False
    assert _webhook(remote, b["webhook_id"])["rule_ids"] == []


def test_update_webhook_refused_the_same_both_ways(remote):
    hook = _ok_json(remote.local("webhooks", "add", PUBLIC, "--disabled", "--json"))
    result = remote.same("webhooks", "update", hook["webhook_id"], "--url", "http://10.0.0.1/x")
    assert result.exit_code == 1 and "private" in result.stderr
    result = remote.same("webhooks", "update", hook["webhook_id"], "--format", "pagerduty")
    assert result.exit_code == 1 and "routing_key" in result.stderr
    assert _webhook(remote, hook["webhook_id"])["url"] == PUBLIC


@pytest.mark.parametrize("json_", [(), ("--json",)])
def test_remove_webhook(remote, json_):
    a, b = (_ok_json(remote.local("webhooks", "add", PUBLIC, "--disabled", "--json")) for _ in range(2))
    here, there = _both(remote, ("webhooks", "remove", a["webhook_id"], *json_),
                        ("webhooks", "remove", b["webhook_id"], *json_))
    assert here.exit_code == 0 and b["webhook_id"] in there.stdout + there.stderr
    assert _webhook(remote, a["webhook_id"]) is None and _webhook(remote, b["webhook_id"]) is None


@pytest.mark.parametrize("json_", [(), ("--json",)])
def test_webhook_test_send(remote, json_):
    receiver = Receiver().start()
    try:
        hook = _ok_json(remote.local("webhooks", "add", receiver.url, "--disabled", "--json", env=ALLOW_PRIVATE))
        here, there = _both(remote, ("webhooks", "test", hook["webhook_id"], *json_))
        assert here.exit_code == 0 and "delivered" in there.stdout and "200" in there.stdout
        assert len(receiver.accepted) == 2
        receiver.mode = "fail"
        here, there = _both(remote, ("webhooks", "test", hook["webhook_id"], *json_))
        assert here.exit_code == 1 and "HTTP 500: receiver broken" in there.stdout
        log = _ok_json(remote.local("webhooks", "deliveries", "--webhook", hook["webhook_id"], "--json"))
        assert [d["status"] for d in log["deliveries"]].count("failed") == 2 and log["total"] == 4
    finally:
        receiver.stop()


@pytest.mark.parametrize("args", [
    ("alerts", "evaluate", "--dry-run", "--json"),
    ("alerts", "evaluate", "--dry-run", "--at", "2026-01-01T12:00:00Z", "--json"),
    ("alerts", "evaluate", "--dry-run", "--exit-code"),
    ("alerts", "evaluate", "--at", "2026-01-01T12:00:00Z"),
])
def test_dry_runs_print_the_same_and_record_nothing(remote, args):
    rule = _add_rule(remote, *FIRING)
    try:
        before = _events(remote, rule["rule_id"])
        remote.same(*args, volatile=("evaluated_at",))
        assert _events(remote, rule["rule_id"]) == before == []
    finally:
        _disable(remote, rule["rule_id"])
