"""The outbox against a real receiver on 127.0.0.1 that is down, slow or failing, then
recovers: every alert is delivered exactly once in the end, and nothing ever hangs."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import requests

from obsctl.config import Settings
from obsctl.services import alerts, webhooks
from obsctl.services.alerts import rules as alert_rules
from obsctl.services.ingest import ingest_events
from obsctl.services.webhooks.delivery import backoff_seconds, deliver_due
from obsctl.services.webhooks.sender import WebhookSender
from obsctl.timeutil import format_ts
from tests.conftest import event
from tests.webhook_receiver import Receiver, free_port

AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def settings(db_url) -> Settings:
    return Settings.from_env({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}, db_path=db_url)


@pytest.fixture
def receivers():
    started: list[Receiver] = []

    def start(**kwargs) -> Receiver:
        receiver = Receiver(**kwargs).start()
        started.append(receiver)
        return receiver

    yield start
    for receiver in started:
        receiver.stop()


def fire(db, settings, count: int = 1, at: datetime = AT) -> list[str]:
    """Fire `count` alerts (one rule each, cooldown 0) at `at`; returns their alert ids."""
    ingest_events(db, [event("s", "error", timestamp=format_ts(at - timedelta(minutes=1)))])
    existing = {r["rule_id"] for r in alert_rules.list_rules(db)["rules"]}
    while len(existing) < count:
        existing.add(alert_rules.create_rule(db, {
            "name": f"r{len(existing)}", "metric": "error_rate", "operator": ">", "threshold": 1,
            "cooldown_minutes": 0})["rule_id"])
    body = alerts.evaluate_alerts(db, settings, at=at)
    return [r["alert_id"] for r in body["results"] if r["status"] == "fired"]


def deliveries(db) -> list[dict]:
    return webhooks.list_deliveries(db, limit=500)["deliveries"]


def open_store(db_url, backend):
    """A store of its own over the test's database (a second server, a cron run)."""
    from tests.store_support import open_db, open_pg

    return open_db(db_url) if backend == "sqlite" else open_pg(db_url)


def delivered_alert_ids(receiver: Receiver) -> list[str]:
    return sorted(json.loads(r["body"])["alert"]["alert_id"] for r in receiver.accepted)


def test_backoff_doubles_up_to_60_seconds():
    assert [backoff_seconds(n) for n in range(1, 10)] == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_receiver_down_then_up_delivers_each_alert_once(db, settings, receivers):
    port = free_port()
    webhooks.create_webhook(db, settings, {"url": f"http://127.0.0.1:{port}/hook"})
    alert_ids = fire(db, settings, count=3)
    assert len(alert_ids) == 3

    # Nothing listens on the port: each delivery fails fast and is scheduled 1 s later.
    report = deliver_due(db, settings, at=AT)
    assert (report.attempted, report.retrying, report.delivered) == (3, 3, 0)
    pending = deliveries(db)
    assert {d["status"] for d in pending} == {"pending"}
    assert {d["attempts"] for d in pending} == {1}
    assert {d["next_attempt_at"] for d in pending} == {format_ts(AT + timedelta(seconds=1))}
    assert all(d["last_error"].startswith("connection failed") for d in pending)
    # Not due yet: a pass at the same instant attempts nothing.
    assert deliver_due(db, settings, at=AT).attempted == 0

    receiver = receivers(port=port)
    report = deliver_due(db, settings, at=AT + timedelta(seconds=1))
    assert (report.attempted, report.delivered) == (3, 3)
    assert delivered_alert_ids(receiver) == sorted(alert_ids)
    assert {(d["status"], d["attempts"]) for d in deliveries(db)} == {("delivered", 2)}
    # Later passes send nothing more.
    assert deliver_due(db, settings, at=AT + timedelta(hours=1)).attempted == 0
    assert len(receiver.requests) == 3


def test_receiver_answering_500_then_recovering(db, settings, receivers):
    receiver = receivers(mode="fail")
    webhooks.create_webhook(db, settings, {"url": receiver.url})
    (alert_id,) = fire(db, settings)
    clock = AT
    for attempt in (1, 2):
        report = deliver_due(db, settings, at=clock)
        assert (report.attempted, report.retrying) == (1, 1)
        (d,) = deliveries(db)
        assert (d["attempts"], d["last_status_code"], d["last_error"]) == (
            attempt, 500, "HTTP 500: receiver broken")
        clock += timedelta(seconds=backoff_seconds(attempt))
        assert d["next_attempt_at"] == format_ts(clock)
    receiver.mode = "ok"
    assert deliver_due(db, settings, at=clock).delivered == 1
    (d,) = deliveries(db)
    assert (d["status"], d["attempts"], d["last_status_code"], d["last_error"]) == ("delivered", 3, 200, None)
    assert delivered_alert_ids(receiver) == [alert_id]
    assert len({r["headers"]["webhook-id"] for r in receiver.requests}) == 1  # same id every try


def test_slow_receiver_times_out_without_holding_up_the_pass(db, settings, receivers):
    slow = receivers(mode="slow", delay=2.0)
    webhooks.create_webhook(db, settings, {"url": slow.url})
    fire(db, settings)
    started = time.monotonic()
    report = deliver_due(db, settings, at=AT, timeout=0.3)
    assert time.monotonic() - started < 1.5
    assert report.retrying == 1
    assert deliveries(db)[0]["last_error"].startswith("timed out after 0.3 s")
    slow.mode = "ok"
    assert deliver_due(db, settings, at=AT + timedelta(seconds=1), timeout=0.3).delivered == 1
    # The receiver may have seen the timed-out try too; both carry the same webhook-id.
    assert slow.wait_for(1)
    assert len({r["headers"]["webhook-id"] for r in slow.requests}) == 1
    assert deliveries(db)[0]["status"] == "delivered"


def test_pass_budget_leaves_the_rest_pending(db, settings, receivers):
    slow = receivers(mode="slow", delay=1.0)
    webhooks.create_webhook(db, settings, {"url": slow.url})
    fire(db, settings, count=5)
    started = time.monotonic()
    report = deliver_due(db, settings, at=AT, timeout=0.2, budget=0.5)
    assert time.monotonic() - started < 2.0
    assert 1 <= report.attempted < 5
    statuses = [d["status"] for d in deliveries(db)]
    assert statuses.count("pending") == 5


def test_gives_up_after_24_hours(db, settings):
    webhooks.create_webhook(db, settings, {"url": f"http://127.0.0.1:{free_port()}/x"})
    fire(db, settings)
    deliver_due(db, settings, at=AT)
    report = deliver_due(db, settings, at=AT + timedelta(hours=24, seconds=1))
    assert report.expired == 1 and report.attempted == 0
    (d,) = deliveries(db)
    assert (d["status"], d["next_attempt_at"]) == ("failed", None)
    assert d["last_error"] == "gave up: not delivered within 24 hours"


def test_last_retry_inside_the_day_marks_failed(db, settings):
    webhooks.create_webhook(db, settings, {"url": f"http://127.0.0.1:{free_port()}/x"})
    fire(db, settings)
    report = deliver_due(db, settings, at=AT + timedelta(hours=23, minutes=59, seconds=59, milliseconds=500))
    assert report.failed == 1
    assert deliveries(db)[0]["status"] == "failed"


def test_a_disabled_webhook_keeps_its_deliveries_pending(db, settings, receivers):
    receiver = receivers()
    hook = webhooks.create_webhook(db, settings, {"url": receiver.url})
    fire(db, settings)
    webhooks.update_webhook(db, settings, hook["webhook_id"], {"enabled": False})
    assert deliver_due(db, settings, at=AT).attempted == 0
    webhooks.update_webhook(db, settings, hook["webhook_id"], {"enabled": True})
    assert deliver_due(db, settings, at=AT).delivered == 1
    assert receiver.wait_for(1)


def test_concurrent_passes_never_send_a_delivery_twice(db_url, backend, settings, receivers):

    receiver = receivers(mode="slow", delay=0.05)
    db = open_store(db_url, backend)
    webhooks.create_webhook(db, settings, {"url": receiver.url})
    alert_ids = fire(db, settings, count=8)

    def run_pass():
        own = open_store(db_url, backend)
        try:
            deliver_due(own, settings, at=AT)
        finally:
            own.close()

    threads = [threading.Thread(target=run_pass) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert delivered_alert_ids(receiver) == sorted(alert_ids)
    assert len(receiver.requests) == 8
    db.close()


# --- the background sender ----------------------------------------------------------------

def test_background_sender_delivers_and_stops(db, settings, receivers):
    port = free_port()
    webhooks.create_webhook(db, settings, {"url": f"http://127.0.0.1:{port}/hook"})
    now = datetime.now(UTC)
    sender = WebhookSender(settings, poll_seconds=0.2, timeout=1.0).start()
    try:
        alert_ids = fire(db, settings, count=2, at=now)
        sender.wake()
        # Down at first: wait for a failed try, then start the receiver; backoff is 1 s.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(d["attempts"] for d in deliveries(db)):
            time.sleep(0.05)
        assert all(d["attempts"] >= 1 for d in deliveries(db))
        receiver = receivers(port=port)
        assert receiver.wait_for(2, timeout=15)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and {d["status"] for d in deliveries(db)} != {"delivered"}:
            time.sleep(0.05)
    finally:
        sender.stop()
    assert not sender.running
    assert delivered_alert_ids(receiver) == sorted(alert_ids)
    assert {d["status"] for d in deliveries(db)} == {"delivered"}


def test_test_app_starts_no_background_thread(make_app):
    before = {t.name for t in threading.enumerate()}
    make_app()
    assert "obsctl-webhook-sender" not in {t.name for t in threading.enumerate()} - before


# --- end to end: a real `obsctl serve` ------------------------------------------------------

@pytest.mark.e2e
def test_served_evaluate_delivers_through_the_background_sender(live_server, receivers, cli):
    receiver = receivers()
    server = live_server({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"})
    base = server.url
    hook = requests.post(f"{base}/webhooks", json={"url": receiver.url, "secret": "generate"}, timeout=10)
    assert hook.status_code == 201
    requests.post(f"{base}/alerts/rules", json={"name": "e", "metric": "error_rate", "operator": ">",
                                                "threshold": 10, "cooldown_minutes": 0}, timeout=10)
    now = datetime.now(UTC)
    requests.post(f"{base}/events", json={"events": [
        event("e2e", "error", timestamp=format_ts(now - timedelta(seconds=30)))]}, timeout=10)

    started = time.monotonic()
    body = requests.post(f"{base}/alerts/evaluate", timeout=10).json()
    assert body["fired"] == 1 and time.monotonic() - started < 5
    assert receiver.wait_for(1, timeout=15)

    # A cron run in another process at the same time: still one delivery per alert.
    result = cli("alerts", "evaluate", "--json", env={"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"})
    assert result.exit_code == 0
    assert receiver.wait_for(2, timeout=15)
    time.sleep(1.0)
    ids = [r["headers"]["webhook-id"] for r in receiver.accepted]
    assert len(ids) == len(set(ids)) == 2
    assert server.stop() == 0


# --- one deadline per attempt, a claim that outlasts it ------------------------------------

def test_a_dripping_receiver_cannot_stretch_an_attempt_past_its_deadline(db, settings, receivers):
    # One byte of the answer every 0.3 s: each read is quick, the whole answer takes ~18 s.
    drip = receivers(mode="drip", delay=0.3)
    webhooks.create_webhook(db, settings, {"url": drip.url})
    fire(db, settings)
    started = time.monotonic()
    report = deliver_due(db, settings, at=AT, timeout=1.0)
    elapsed = time.monotonic() - started
    assert elapsed < 4, elapsed  # the whole answer would take about 18 s
    assert (report.attempted, report.retrying) == (1, 1)
    (d,) = deliveries(db)
    assert (d["status"], d["attempts"]) == ("pending", 1)
    assert d["last_error"].startswith("timed out after 1 s")
    assert d["next_attempt_at"] == format_ts(AT + timedelta(seconds=1))


def test_the_claim_outlasts_any_attempt(db, settings, receivers):
    from obsctl.services.webhooks.delivery import ATTEMPT_TIMEOUT_S, lease_for

    assert ATTEMPT_TIMEOUT_S == 10.0
    assert lease_for(ATTEMPT_TIMEOUT_S) == timedelta(minutes=2)
    for timeout in (0.5, 10, 60):
        assert lease_for(timeout).total_seconds() > timeout + 60


def test_two_senders_and_a_slow_receiver_deliver_once(db_url, backend, settings, receivers):

    drip = receivers(mode="drip", delay=0.25)
    db = open_store(db_url, backend)
    webhooks.create_webhook(db, settings, {"url": drip.url})
    fire(db, settings, at=datetime.now(UTC))
    results = {}

    def sender(name: str, at_offset: timedelta) -> None:
        own = open_store(db_url, backend)
        try:
            results[name] = deliver_due(own, settings, at=datetime.now(UTC) + at_offset, timeout=3)
        finally:
            own.close()

    first = threading.Thread(target=sender, args=("first", timedelta(0)))
    first.start()
    deadline = time.monotonic() + 10
    while not drip.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    # The first attempt is in flight. The second sender's clock runs ahead by more than the
    # attempt deadline: a claim only as long as the deadline would look abandoned to it.
    second = threading.Thread(target=sender, args=("second", timedelta(seconds=5)))
    second.start()
    second.join(30)
    first.join(30)
    assert results["first"].attempted == 1 and results["second"].attempted == 0
    time.sleep(0.5)
    assert len(drip.requests) == 1
    (d,) = deliveries(db)
    assert d["attempts"] == 1 and d["last_error"].startswith("timed out after 3 s")
    db.close()


def test_410_gone_ends_the_delivery_and_disables_the_webhook(db, settings, receivers):
    gone = receivers(mode="gone")
    hook = webhooks.create_webhook(db, settings, {"url": gone.url})
    fire(db, settings, count=2)
    report = deliver_due(db, settings, at=AT)
    # The first answer 410 stops everything for this webhook: the other delivery waits.
    assert (report.attempted, report.failed, report.retrying) == (1, 1, 0)
    failed = [d for d in deliveries(db) if d["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["last_status_code"] == 410
    assert failed[0]["last_error"] == ("HTTP 410 Gone: receiver broken: the receiver wants no more "
                                       "deliveries; the webhook was disabled")
    assert webhooks.get_webhook(db, hook["webhook_id"])["enabled"] is False
    assert deliver_due(db, settings, at=AT + timedelta(hours=1)).attempted == 0
    assert len(gone.requests) == 1


# --- cancelling: removed rules and webhooks ------------------------------------------------

def test_removing_a_rule_cancels_its_pending_deliveries(db, settings, receivers):
    port = free_port()
    webhooks.create_webhook(db, settings, {"url": f"http://127.0.0.1:{port}/hook"})
    fire(db, settings, count=2)
    deliver_due(db, settings, at=AT)  # the receiver is down: both pending
    rule_id = alert_rules.list_rules(db)["rules"][0]["rule_id"]
    alert_rules.delete_rule(db, rule_id)
    by_status = {d["status"]: d for d in deliveries(db)}
    assert set(by_status) == {"pending", "failed"}
    assert by_status["failed"]["last_error"] == f"cancelled: alert rule {rule_id} was removed"
    receiver = receivers(port=port)
    report = deliver_due(db, settings, at=AT + timedelta(minutes=1))
    assert (report.attempted, report.delivered) == (1, 1)
    assert len(receiver.requests) == 1


def test_removing_a_rule_or_webhook_during_an_attempt_is_not_undone(db_url, backend, settings, receivers):

    drip = receivers(mode="drip", delay=0.05)
    db = open_store(db_url, backend)
    hook = webhooks.create_webhook(db, settings, {"url": drip.url})
    fire(db, settings, count=2)
    reports = []

    def run_pass(at: datetime) -> None:
        own = open_store(db_url, backend)
        try:
            reports.append(deliver_due(own, settings, at=at, timeout=10))
        finally:
            own.close()

    def start_pass_and_wait_for_its_request(at: datetime) -> threading.Thread:
        drip.requests.clear()
        thread = threading.Thread(target=run_pass, args=(at,))
        thread.start()
        deadline = time.monotonic() + 10
        while not drip.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        assert drip.requests
        return thread

    thread = start_pass_and_wait_for_its_request(AT)
    in_flight = json.loads(drip.requests[0]["body"])["rule"]["rule_id"]
    alert_rules.delete_rule(db, in_flight)  # while its delivery is being attempted
    thread.join(30)
    statuses = sorted(d["status"] for d in deliveries(db))
    assert statuses == ["delivered", "failed"]
    assert reports[0].attempted == 2 and reports[0].delivered == 1  # the cancelled one not counted

    later = AT + timedelta(hours=1)
    fire(db, settings, at=later)
    thread = start_pass_and_wait_for_its_request(later)
    webhooks.delete_webhook(db, hook["webhook_id"])
    thread.join(30)
    assert deliveries(db) == [] and reports[1].attempted == 1 and reports[1].delivered == 0
    db.close()


# --- `alerts evaluate` for cron: quiet unless something fired or failed for good ----------

def test_evaluate_is_quiet_about_retries_unless_verbose(cli, db, settings, receivers):
    env = {"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}
    port = free_port()
    webhooks.create_webhook(db, settings, {"url": f"http://127.0.0.1:{port}/hook"})
    alert_rules.create_rule(db, {"name": "errors", "metric": "error_rate", "operator": ">",
                                 "threshold": 1, "cooldown_minutes": 0})
    ingest_events(db, [event("s", "error", timestamp=format_ts(datetime.now(UTC) - timedelta(minutes=1)))])

    fired = cli("alerts", "evaluate", "--exit-code", env=env)
    assert fired.exit_code == 3 and fired.stdout.startswith("FIRED alert_")
    assert fired.stderr == ""  # the receiver is down: retried later, nothing to mail
    time.sleep(1.1)  # the retries are due (backoff 1 s)
    verbose = cli("alerts", "evaluate", "--verbose", env=env)
    assert "will be retried" in verbose.stderr and "Connection refused" in verbose.stderr

    receivers(port=port, mode="gone")
    time.sleep(2.1)
    final = cli("alerts", "evaluate", env=env)
    assert "failed for good" in final.stderr and "HTTP 410 Gone" in final.stderr


def test_cron_evaluate_without_the_setting_delivers_to_a_webhook_saved_with_it(cli, db, receivers):
    receiver = receivers()
    added = cli("webhooks", "add", receiver.url, "--json", env={"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"})
    assert json.loads(added.stdout)["allow_private"] is True
    alert_rules.create_rule(db, {"name": "errors", "metric": "error_rate", "operator": ">",
                                 "threshold": 1, "cooldown_minutes": 0})
    ingest_events(db, [event("s", "error", timestamp=format_ts(datetime.now(UTC) - timedelta(minutes=1)))])
    result = cli("alerts", "evaluate")  # no OBSCTL_WEBHOOK_ALLOW_PRIVATE here
    assert result.exit_code == 0 and result.stdout.startswith("FIRED") and result.stderr == ""
    assert receiver.wait_for(1)
    assert [d["status"] for d in deliveries(db)] == ["delivered"]
