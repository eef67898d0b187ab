"""Running for a team: PostgreSQL shared by several `obsctl serve` processes, Redis for the
rate limits, /health for the load balancer, and `obsctl db copy` between backends.

Real servers on 127.0.0.1: PostgreSQL and Redis as configured for the suite (skipped without
them, a failure under CI), `obsctl serve` subprocesses, a webhook receiver.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading
import time

import psycopg
import pytest
import requests

from obsctl.store.postgres.schema import MIGRATIONS
from tests.conftest import event, start_server
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.e2e


def obsctl(db: str, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    done = subprocess.run([sys.executable, "-m", "obsctl", "--db", db, *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})
    if check:
        assert done.returncode == 0, done.stderr
    return done


# db copy ---------------------------------------------------------------------------------

def _demo_events(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = []
    for s in range(6):
        sid = f"copy-{s}"
        lines.append(event(sid, "session_start", event_id=f"{sid}-start", agent_name=f"agent-{s % 2}",
                           timestamp=f"2026-11-{10 + s:02d}T10:00:00.000Z", metadata={"team": "x"}))
        for i in range(5):
            lines.append(event(sid, "llm_call", event_id=f"{sid}-{i}", model="gpt-4o", tokens_in=10 * i,
                               tokens_out=3, duration_ms=12.5 if i % 2 else 40,
                               timestamp=f"2026-11-{10 + s:02d}T10:00:0{i + 1}.000Z"))
        lines.append(event(sid, "error", event_id=f"{sid}-err", timestamp=f"2026-11-{10 + s:02d}T10:00:08.000Z",
                           output_data={"error": "boom"}))
        if s % 3:
            lines.append(event(sid, "session_end", event_id=f"{sid}-end", status="completed",
                               timestamp=f"2026-11-{10 + s:02d}T10:00:09.000Z"))
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


READS = (("sessions", "list", "--json"), ("analytics", "--json"), ("explain", "copy-1", "--json"),
         ("export", "copy-2", "--format", "csv"), ("compare", "copy-1", "copy-2", "--json"))


def test_db_copy_sqlite_to_postgresql_and_back_answers_the_same(tmp_path, pg_url):
    first = str(tmp_path / "first.db")
    obsctl(first, "ingest", str(_demo_events(tmp_path)))
    obsctl(first, "alerts", "rules", "add", "--name", "errors", "--metric", "error_rate",
           "--operator", ">", "--threshold", "1")
    copied = json.loads(obsctl(first, "db", "copy", first, pg_url, "--json").stdout)
    assert copied["verified"] is True
    assert copied["tables"]["events"] == 6 * 7 + 4 and copied["tables"]["alert_rules"] == 1
    back = str(tmp_path / "back.db")
    obsctl(first, "db", "copy", pg_url, back)
    for args in READS:
        answers = {db: _without_clock(obsctl(db, *args).stdout) for db in (first, pg_url, back)}
        assert answers[first] == answers[pg_url] == answers[back], args


def _without_clock(output: str) -> str:
    """The output without the time it was produced at (compare's `compared_at`)."""
    if output.startswith("{"):
        body = json.loads(output)
        body.pop("compared_at", None)
        return json.dumps(body)
    return output


def test_db_copy_refuses_a_target_that_holds_data_and_leaves_it_untouched(tmp_path, pg_url):
    source = str(tmp_path / "source.db")
    obsctl(source, "ingest", str(_demo_events(tmp_path)))
    obsctl(pg_url, "ingest", "-", check=False)  # creates the schema, stores nothing
    (tmp_path / "one.jsonl").write_text(json.dumps(event("kept", event_id="kept-1")) + "\n")
    obsctl(pg_url, "ingest", str(tmp_path / "one.jsonl"))
    refused = obsctl(source, "db", "copy", source, pg_url, check=False)
    assert refused.returncode == 1
    assert "already holds data" in refused.stderr and "Traceback" not in refused.stderr
    listed = json.loads(obsctl(pg_url, "sessions", "list", "--json").stdout)
    assert [s["session_id"] for s in listed["sessions"]] == ["kept"]


def test_db_copy_to_itself_and_to_an_unreachable_server_are_one_line_errors(tmp_path):
    db = str(tmp_path / "a.db")
    obsctl(db, "ingest", str(_demo_events(tmp_path)))
    same = obsctl(db, "db", "copy", db, f"sqlite:///{db}", check=False)
    assert same.returncode == 1 and "the same database" in same.stderr
    port = _closed_port()
    down = obsctl(db, "db", "copy", db, f"postgresql://postgres@127.0.0.1:{port}/x", check=False)
    assert down.returncode == 1
    assert f"cannot reach PostgreSQL at postgresql://postgres@127.0.0.1:{port}/x" in down.stderr
    assert len(down.stderr.strip().splitlines()) == 1 and "Traceback" not in down.stderr


# /health -----------------------------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TcpRelay:
    """A TCP relay on 127.0.0.1 to another port that can be cut: what the server sees when
    the network to its database fails."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = True
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self):
        self.open = False
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self):
        self.cut()
        self.listener.close()


def test_health_is_503_while_postgresql_is_unreachable(tmp_path, pg_url):
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_url)
    relay = TcpRelay(parts.port or 5432)
    relayed = urlunsplit(parts._replace(netloc=f"{parts.username}@127.0.0.1:{relay.port}"))
    server = start_server(relayed, tmp_path)
    try:
        healthy = requests.get(f"{server.url}/health", timeout=10)
        assert healthy.status_code == 200
        assert healthy.json()["database"] | {"checked_at": None} == {
            "backend": "postgresql", "reachable": True, "quick_check": "ok", "checked_at": None,
            "writes_waiting": 0}
        relay.cut()
        down = requests.get(f"{server.url}/health", timeout=15)
        assert down.status_code == 503
        body = down.json()
        assert body["status"] == "unavailable" and body["database"]["reachable"] is False
        assert "cannot reach PostgreSQL" in body["database"]["error"]
        assert "password" not in body["database"]["error"].lower() or "***" in body["database"]["error"]
        # A client's read gets a 503 too, not a 500.
        assert requests.get(f"{server.url}/sessions", timeout=15).status_code == 503
    finally:
        server.stop()
        relay.close()


def test_health_reports_redis_and_is_503_when_it_is_down(tmp_path, db_url, redis_url):
    up = start_server(db_url, tmp_path, {"OBSCTL_RATELIMIT_STORAGE_URI": redis_url})
    try:
        body = requests.get(f"{up.url}/health", timeout=10).json()
        assert body["status"] == "ok" and body["redis"] == {"reachable": True}
    finally:
        up.stop()
    down = start_server(db_url, tmp_path, {"OBSCTL_RATELIMIT_STORAGE_URI": f"redis://127.0.0.1:{_closed_port()}/0"},
                        healthy=False)
    try:
        r = requests.get(f"{down.url}/health", timeout=10)
        assert r.status_code == 503
        assert r.json()["redis"]["reachable"] is False and r.json()["status"] == "unavailable"
        # Requests are still served, without limits, while the load balancer takes it out.
        assert requests.get(f"{down.url}/sessions", timeout=10).status_code == 200
    finally:
        down.stop()


# Two servers, one PostgreSQL, one Redis ---------------------------------------------------

def test_two_servers_share_postgresql_and_redis(tmp_path, pg_url, redis_url):
    """8 clients spread over two servers post overlapping batches (each batch sent twice, to
    different servers), while both evaluate alerts and send webhooks; then one server is
    killed mid-load. Every event is stored once, totals are exact, each alert fires once,
    each delivery reaches the receiver once, and no acknowledged batch is lost."""
    receiver = Receiver().start()
    env = {"OBSCTL_RATE_LIMITS": "off", "OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}
    obsctl(pg_url, "alerts", "rules", "add", "--name", "busy", "--metric", "session_count",
           "--operator", ">", "--threshold", "0", "--cooldown-minutes", "60")
    obsctl(pg_url, "webhooks", "add", receiver.url, env={"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"})
    servers = [start_server(pg_url, tmp_path, env, threads=6) for _ in range(2)]
    acknowledged: list[list[str]] = []
    failures: list[str] = []
    lock = threading.Lock()

    def client(worker: int):
        with requests.Session() as http:
            for b in range(12):
                sid = f"team-{worker}-{b // 3}"
                batch = [event(sid, "error" if j == 0 and b == 0 else "llm_call", event_id=f"{sid}-{b}-{j}",
                               tokens_in=j, tokens_out=1, duration_ms=5) for j in range(100)]
                for attempt, server in enumerate((servers[(worker + b) % 2], servers[(worker + b + 1) % 2])):
                    try:
                        r = http.post(f"{server.url}/events", json={"events": batch}, timeout=60)
                    except requests.RequestException as exc:
                        if attempt == 1:
                            with lock:
                                failures.append(str(exc))
                        continue
                    if r.status_code == 200:
                        with lock:
                            acknowledged.append([e["event_id"] for e in batch])
                    elif attempt == 1:
                        with lock:
                            failures.append(f"{r.status_code} {r.text[:200]}")

    evaluations: list[subprocess.CompletedProcess] = []

    def evaluate():
        for _ in range(3):
            evaluations.append(obsctl(pg_url, "alerts", "evaluate", "--json", check=False))

    threads = [threading.Thread(target=client, args=(w,)) for w in range(8)]
    threads += [threading.Thread(target=evaluate) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        time.sleep(1.0)
        servers[0].process.send_signal(signal.SIGKILL)  # mid-load: the other keeps serving
        servers[0].process.wait(timeout=10)
        for t in threads:
            t.join(timeout=300)
        assert all(done.returncode in (0, 3) for done in evaluations), [d.stderr for d in evaluations]
        # The survivor sends the deliveries; wait for the outbox to drain.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not receiver.accepted:
            time.sleep(0.2)
        time.sleep(1.0)
    finally:
        for server in servers:
            server.stop()
        receiver.stop()

    stored_ids = set()
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT event_id FROM events").fetchall()
        stored_ids = [r[0] for r in rows]
        assert len(stored_ids) == len(set(stored_ids)), "an event was stored twice"
        acked = {i for batch in acknowledged for i in batch}
        assert acked <= set(stored_ids), "an acknowledged event was lost"
        assert conn.execute("SELECT COUNT(*) FROM event_keys").fetchone()[0] == len(stored_ids)
        per_session = dict(conn.execute("SELECT session_id, COUNT(*) FROM events GROUP BY 1").fetchall())
        totals = dict(conn.execute("SELECT session_id, event_count FROM sessions").fetchall())
        assert per_session == totals
        tokens = conn.execute("SELECT (SELECT SUM(total_tokens_in) FROM sessions), "
                              "(SELECT SUM(tokens_in) FROM events)").fetchone()
        assert tokens[0] == tokens[1]
        fired = conn.execute("SELECT COUNT(*) FROM alert_events").fetchone()[0]
        deliveries = conn.execute("SELECT COUNT(*), COUNT(*) FILTER (WHERE status = 'delivered') "
                                  "FROM webhook_deliveries").fetchone()
    assert len(acknowledged) >= 8 * 12, failures[:3]  # every batch acknowledged at least once
    assert fired == 1, "two evaluators fired the same alert twice (or none fired)"
    assert deliveries[0] == 1
    alert_posts = [r for r in receiver.accepted]
    assert len(alert_posts) == deliveries[1] <= 1
    summary = json.loads(obsctl(pg_url, "analytics", "--json").stdout)
    assert summary["overview"]["total_events"] == len(stored_ids)


def test_a_shared_rate_limit_holds_across_two_servers(tmp_path, pg_url, redis_url):
    env = {"OBSCTL_RATELIMIT_STORAGE_URI": redis_url, "OBSCTL_RATE_LIMITS": "sessions=10/minute"}
    servers = [start_server(pg_url, tmp_path, env) for _ in range(2)]
    try:
        codes = [requests.get(f"{servers[i % 2].url}/sessions", timeout=10).status_code for i in range(16)]
    finally:
        for server in servers:
            server.stop()
    assert codes.count(200) == 10 and codes.count(429) == 6
    assert codes[:10] == [200] * 10


def test_concurrent_batches_over_shared_sessions_and_new_weeks_all_commit(pg_url):
    """Batches that write the same sessions in different orders, and events of weeks that have
    no partition yet, from several threads at once: lost deadlocks are redone, every batch
    commits, and the totals are exact."""
    import random

    from obsctl.services.ingest import ingest_events
    from obsctl.services.storage import open_store

    store = open_store(pg_url, mode="server")
    errors: list[BaseException] = []

    def writer(seed: int):
        rng = random.Random(seed)
        try:
            for b in range(15):
                sessions = [f"shared-{i}" for i in range(12)]
                rng.shuffle(sessions)
                week = 1 + (seed * 15 + b) % 40
                batch = [event(sid, "llm_call", event_id=f"w{seed}-b{b}-{sid}", tokens_in=1,
                               agent_name=f"agent-{rng.randrange(4)}",
                               timestamp=f"2025-{1 + week // 4:02d}-{1 + 7 * (week % 4):02d}T10:00:00.000Z")
                         for sid in sessions]
                ingest_events(store, batch)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(seed,)) for seed in range(6)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        store.close()
    assert errors == []
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 6 * 15 * 12
        assert conn.execute("SELECT SUM(event_count), SUM(total_tokens_in) FROM sessions").fetchone() == (
            6 * 15 * 12, 6 * 15 * 12)
        assert conn.execute("SELECT COUNT(*) FROM events_default").fetchone()[0] == 0
        assert conn.execute("SELECT SUM(sessions), SUM(events) FROM session_stats").fetchone() == (12, 6 * 15 * 12)


def test_servers_starting_together_migrate_a_new_database_once(pg_url):
    """Four stores opened at the same moment on an empty schema (servers starting together):
    the migrations are applied once, under the advisory lock, and every store works."""
    from obsctl.services.storage import open_store

    stores, errors = [], []
    start = threading.Barrier(4)

    def opener():
        start.wait()
        try:
            stores.append(open_store(pg_url, mode="server"))
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert {store.schema_version() for store in stores} == {len(MIGRATIONS)}
    finally:
        for store in stores:
            store.close()
    with psycopg.connect(pg_url) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM _obsctl_migrations ORDER BY applied_order")]
    assert len(names) == len(set(names)) == len(MIGRATIONS)


def test_a_password_in_the_url_is_never_shown(tmp_path, pg_url):
    with_password = pg_url.replace("postgres@", "postgres:s3cret-pw@", 1)
    shown = pg_url.replace("postgres@", "postgres:***@", 1)
    server = start_server(with_password, tmp_path, threads=2)
    try:
        first = server.log().splitlines()[0]
        assert first.startswith(f"obsctl serving {shown} on http://127.0.0.1:{server.port} (2 threads, ")
    finally:
        server.stop()
    info = obsctl(with_password, "db", "info", "--json")
    assert json.loads(info.stdout)["url"] == shown
    copied = obsctl(with_password, "db", "copy", with_password, str(tmp_path / "copy.db"))
    down = obsctl(with_password.replace(":5432/", f":{_closed_port()}/"), "sessions", "list", check=False)
    for output in (server.log(), info.stdout, info.stderr, copied.stdout, copied.stderr, down.stderr):
        assert "s3cret-pw" not in output
    assert down.returncode == 1 and "postgres:***@" in down.stderr
