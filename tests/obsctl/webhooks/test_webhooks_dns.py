"""Webhook host names are looked up before any transaction opens: an ingest never waits
behind a slow DNS answer, whichever use case asks it (apply, webhook create and update,
test sends, deliveries and retries).

The seam is the system resolver itself: `socket.getaddrinfo` answers names under
`.slow.test` (127.0.0.1, with private destinations allowed) only when the test lets it, so
the test decides how long a lookup lasts, and everything above it (url_safety's lookup with
its deadline, the services, the HTTP app and its writer queue) is the real code."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from obsctl.services import configuration, webhooks
from obsctl.services.webhooks.delivery import deliver_due
from obsctl.services.webhooks.url_safety import check_destinations
from tests.conftest import event
from tests.store_support import sqlite_writer_free

SLOW = ".slow.test"


class SlowNames:
    """Answers names ending in .slow.test with 127.0.0.1 once `release` is set, saying when a
    lookup starts (`asked`); other names go to the real resolver. `probe`, when set, runs at
    the start of each slow lookup, one at a time. (Nothing listens where the answer leads: a delivery there
    fails at once, after its lookup.)"""

    def __init__(self):
        self.asked = threading.Event()
        self.release = threading.Event()
        self.names: list[str] = []
        self.probe = None
        self.seen: list = []
        self._real = socket.getaddrinfo
        self._probing = threading.Lock()

    def __call__(self, host, port, *args, **kwargs):
        if not (isinstance(host, str) and host.endswith(SLOW)):
            return self._real(host, port, *args, **kwargs)
        self.names.append(host)
        if self.probe is not None:
            with self._probing:  # lookups run side by side: one probe must not see another's
                self.seen.append(self.probe())
        self.asked.set()
        if not self.release.wait(4):
            raise AssertionError("the test never released the lookup")
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", port))]


@pytest.fixture
def slow_names(monkeypatch):
    names = SlowNames()
    monkeypatch.setattr(socket, "getaddrinfo", names)
    yield names
    names.release.set()


def _in_background(work) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = work()
        except Exception as exc:  # reported by the test's assertions
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


DOCUMENT = {"version": 1, "webhooks": [
    {"webhook_id": "wh_one", "url": f"http://one{SLOW}/hook"},
    {"webhook_id": "wh_two", "url": f"http://two{SLOW}/hook"},
]}


@pytest.mark.sqlite_only  # the write lock an apply held is SQLite's one database-wide lock
@pytest.mark.parametrize("use_case", ["apply", "update"])
def test_an_ingest_is_not_blocked_while_webhook_names_are_looked_up(make_app, slow_names, use_case):
    # A write that cannot start within 0.5 s is a 503: what every ingest got while an apply
    # held the write lock through its lookups.
    app = make_app({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}, write_timeout=0.5)
    if use_case == "apply":
        request = lambda c: c.post("/apply", json=DOCUMENT)  # noqa: E731
    else:
        created = app.test_client().post("/webhooks", json={"url": "http://127.0.0.1:9/hook"})
        webhook_id = created.get_json()["webhook_id"]
        request = lambda c: c.put(f"/webhooks/{webhook_id}", json={"url": f"http://moved{SLOW}/hook"})  # noqa: E731
    saving, saved = _in_background(lambda: request(app.test_client()))
    try:
        assert slow_names.asked.wait(5), "the use case never looked the name up"
        ingest = app.test_client().post("/events", json={"events": [event("during-lookup")]})
    finally:
        slow_names.release.set()
        saving.join(10)
    assert ingest.status_code == 200 and ingest.get_json()["processed"] == 1, ingest.get_json()
    answer = saved["result"]
    assert answer.status_code == 200, answer.get_json()
    if use_case == "apply":
        assert answer.get_json()["created"] == 2
        assert sorted(slow_names.names) == [f"one{SLOW}", f"two{SLOW}"]  # each name asked once
    else:
        assert answer.get_json()["url"] == f"http://moved{SLOW}/hook"


def _failed_delivery(store, settings) -> str:
    """A webhook on a slow name whose one delivery has failed (so it can be retried)."""
    hook = webhooks.create_webhook(store, settings, {"url": f"http://retry{SLOW}/hook"})
    with store.transaction():
        store.webhooks.insert_deliveries([{
        "delivery_id": "msg_failed", "webhook_id": hook["webhook_id"], "alert_id": None,
            "event_type": "alert.fired", "payload": "{}", "status": "failed", "attempts": 1,
            "last_error": "HTTP 500", "last_status_code": 500, "next_attempt_at": "2026-01-01T00:00:00.000Z",
            "created_at": "2099-01-01T00:00:00.000Z", "delivered_at": None}])
    return "msg_failed"


USE_CASES = {
    "create": lambda store, settings, ids: webhooks.create_webhook(
        store, settings, {"url": f"http://new{SLOW}/hook"}),
    "update": lambda store, settings, ids: webhooks.update_webhook(
        store, settings, ids["webhook"], {"url": f"http://moved{SLOW}/hook"}),
    "apply": lambda store, settings, ids: configuration.apply_config(store, settings, DOCUMENT),
    "apply dry run": lambda store, settings, ids: configuration.apply_config(
        store, settings, DOCUMENT, dry_run=True),
    "test send": lambda store, settings, ids: webhooks.send_webhook_test(
        store, settings, ids["slow webhook"], timeout=2),
    "delivery": lambda store, settings, ids: deliver_due(store, settings, timeout=2),
    "retry": lambda store, settings, ids: webhooks.retry_delivery(store, settings, ids["failed"], timeout=2),
}


@pytest.mark.parametrize("use_case", list(USE_CASES))
def test_no_use_case_looks_a_name_up_while_holding_the_write_lock(store, private_ok, db_path, slow_names,
                                                                   use_case):
    slow_names.release.set()  # answered at once: only when the lookup happens matters here
    ids = {"webhook": webhooks.create_webhook(store, private_ok, {"url": "http://127.0.0.1:9/hook"})["webhook_id"]}
    if use_case in ("test send", "delivery", "retry"):
        ids["failed"] = _failed_delivery(store, private_ok)
        ids["slow webhook"] = store.webhooks.get_delivery(ids["failed"])["webhook_id"]
    if use_case == "delivery":
        with store.transaction():
            store.webhooks.insert_deliveries([{
                "delivery_id": "msg_due", "webhook_id": ids["slow webhook"], "alert_id": None,
                "event_type": "alert.fired", "payload": "{}", "status": "pending", "attempts": 0,
                "last_error": None, "last_status_code": None, "next_attempt_at": "2000-01-01T00:00:00.000Z",
                "created_at": "2099-01-01T00:00:00.000Z", "delivered_at": None}])
    slow_names.names.clear()
    slow_names.probe = lambda: sqlite_writer_free(db_path)
    USE_CASES[use_case](store, private_ok, ids)
    assert slow_names.names, "the use case never looked a name up"
    assert all(slow_names.seen), f"{use_case} looked a name up while holding the write lock"


def test_the_lookups_of_many_names_share_one_deadline(slow_names):
    # Twenty names that do not answer: one after another, 5 s each, saving them would take
    # minutes; side by side with one deadline it takes that deadline, and names without an
    # answer are accepted (each delivery checks its destination again).
    urls = [f"http://n{i}{SLOW}/hook" for i in range(20)]
    started = time.monotonic()
    checked = check_destinations(urls, allow_private=False, seconds=0.3)
    assert time.monotonic() - started < 1.5
    assert checked == dict.fromkeys(urls)
