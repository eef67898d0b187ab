"""Faults of the database file: a full disk, damaged pages, read-only storage, a mistyped
path. Real SQLite files throughout; the full disk and the read-only filesystem are real too
where the machine allows a private mount (`unshare -m`), and SQLite's max_page_count (which
makes it report SQLITE_FULL exactly as on a full disk) everywhere."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pytest
import requests
from typer.testing import CliRunner

from obsctl.cli.main import app as cli_app
from obsctl.services.analytics import get_analytics
from obsctl.services.ingest import ingest_events
from obsctl.store.sqlite.db import connect
from obsctl.store.sqlite.writer import WriteQueue
from tests.conftest import LiveServer, event, free_port
from tests.store_support import open_db, open_db_readonly

OBSCTL = [sys.executable, "-m", "obsctl"]


def obsctl(db_path, *args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*OBSCTL, "--db", str(db_path), *args], capture_output=True, text=True,
                          timeout=60, **kwargs)


def big_batch(name: str, n: int = 300) -> dict:
    return {"events": [event(name, event_id=f"{name}-{i}", input_data={"p": "x" * 2000}) for i in range(n)]}


# A full disk ---------------------------------------------------------------------------------

def test_a_full_disk_is_a_507_that_names_the_cause_and_the_server_recovers(make_app, db_path):
    app = make_app({"OBSCTL_RATE_LIMITS": "off"})
    client = app.test_client()
    pages = sqlite3.connect(db_path).execute("PRAGMA page_count").fetchone()[0]
    handles = []

    def small_disk(path):
        handle = connect(path)
        handle.conn.execute(f"PRAGMA max_page_count = {pages + 30}")
        handles.append(handle)
        return handle

    # The app's writer, on a connection whose database may grow by 30 pages only.
    pool = app.extensions["obsctl"].store._connections.pool
    pool.writer = WriteQueue(db_path, capacity=8, timeout=10, connect=small_disk)
    assert client.post("/events", json={"events": [event("before", event_id="b0")]}).status_code == 200

    full = client.post("/events", json=big_batch("big"))
    assert full.status_code == 507
    assert full.json == {"error": "the disk holding the database is full (SQLite: database or disk "
                                  "is full); nothing of this write was stored; free space and retry"}
    assert client.get("/sessions/big").status_code == 404  # nothing partial
    # Other writes that fit still work; reads never stopped.
    assert client.post("/events", json={"events": [event("small", event_id="s0")]}).status_code == 200
    assert client.get("/sessions").json["total"] == 2  # "before" and "small"
    # Space frees up: the same batch goes in, on the writer's connection (a new one since the
    # full disk: the search index keeps a failed write's error on the connection it used).
    assert len(handles) == 2
    handles[-1].conn.execute("PRAGMA max_page_count = 1073741823")
    again = client.post("/events", json=big_batch("big"))
    assert again.status_code == 200 and again.json["processed"] == 300
    assert len(client.get("/sessions/big").json["events"]) == 300


def private_mounts_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tempfile.mkdtemp()
    try:
        done = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=1m tmpfs {probe}"],
                              capture_output=True, timeout=10)
        return done.returncode == 0
    finally:
        os.rmdir(probe)


# Not a missing package: the OS must let this user mount a tmpfs in a private mount namespace.
needs_mounts = pytest.mark.skipif(
    not private_mounts_work(),
    reason="the OS does not allow a private mount namespace here (`unshare -m` with a tmpfs mount "
           "failed: needs root, or unprivileged user namespaces)")


def in_small_filesystem(directory: Path, size: str, argv: list[str]) -> list[str]:
    """argv run in a private mount namespace where `directory` is a fresh tmpfs of `size`."""
    return ["unshare", "-m", "--propagation", "private", "sh", "-c",
            'mount -t tmpfs -o size="$1" tmpfs "$2" && shift 2 && exec "$@"', "sh", size,
            str(directory), *argv]


def fill(directory: Path) -> Path:
    """Fill the filesystem of `directory` completely with one file."""
    filler = directory / "filler"
    # Unbuffered: a write that finds the disk full fails there, and closing has nothing left to flush.
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
    return filler


@needs_mounts
def test_a_really_full_disk_is_a_507_and_the_server_recovers_when_space_frees(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    port = free_port()
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 (the child's)
    server = subprocess.Popen(in_small_filesystem(mount, "8m", [
        *OBSCTL, "--db", str(mount / "obsctl.db"), "serve", "--port", str(port)]),
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "OBSCTL_RATE_LIMITS": "off"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.1)
        # The tmpfs is only visible inside the server's namespace: reach it through /proc.
        inside = Path(f"/proc/{server.pid}/root") / mount.relative_to("/")
        filler = fill(inside)
        full = requests.post(f"{url}/events", json=big_batch("big", 1000), timeout=30)
        assert full.status_code == 507, full.text
        assert "disk holding the database is full" in full.json()["error"]
        assert requests.get(f"{url}/sessions/big", timeout=10).status_code == 404
        assert requests.get(f"{url}/health", timeout=10).status_code == 200
        filler.unlink()
        again = requests.post(f"{url}/events", json=big_batch("big", 1000), timeout=30)
        assert again.status_code == 200 and again.json()["processed"] == 1000
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    output = (tmp_path / "serve.log").read_text()
    assert "Traceback" not in output
    assert "write refused: the disk holding the database is full" in output


@needs_mounts
def test_cli_on_a_full_disk_is_one_line_and_exit_1_and_reads_still_work(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in big_batch("cli", 2000)["events"]))
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps(event("first", event_id="f")) + "\n")
    obs = f'{" ".join(OBSCTL)} --db {mount / "obsctl.db"}'
    script = "\n".join([
        f"{obs} ingest --quiet {first}",
        f"head -c 3400k /dev/zero > {mount}/filler",  # a little room is left
        f"{obs} ingest --strict --quiet {events}; echo big=$? >&2",
        f"head -c 100m /dev/zero >> {mount}/filler 2>/dev/null",  # now none
        f"{obs} sessions list --json",
        f"{obs} ingest --quiet {first}; echo small=$? >&2",
    ])
    done = subprocess.run(in_small_filesystem(mount, "4m", ["sh", "-c", script]),
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[:2] == ["Error: the disk holding the database is full (SQLite: database or disk is "
                         "full); nothing of this write was stored; free space and retry", "big=1"]
    assert lines[2:] == [f"Error: cannot open the database {mount / 'obsctl.db'}: the disk holding it "
                         f"is full; free space and retry", "small=1"]
    assert orjson.loads(done.stdout)["total"] == 1  # reading a full disk works


# Damaged pages ---------------------------------------------------------------------------------

def damaged_database(db_path) -> None:
    """A real database whose middle pages are overwritten with garbage."""
    db = open_db(db_path)
    for start in range(0, 3000, 500):
        ingest_events(db, [event(f"s{i // 50}", event_id=f"e{i}", input_data={"p": "y" * 300})
                           for i in range(start, start + 500)])
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size, pages = (db.conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_size", "page_count"))
    db.close()
    with open(db_path, "r+b") as f:
        for page in range(pages // 2, pages // 2 + 4):
            f.seek(page * page_size)
            f.write(b"\xa5" * page_size)


def test_serve_refuses_a_damaged_database_and_db_info_reports_it(tmp_path, db_path):
    damaged_database(db_path)
    started = time.monotonic()
    serve = obsctl(db_path, "serve", "--port", str(free_port()))
    assert serve.returncode == 1
    assert time.monotonic() - started < 30
    assert "Traceback" not in serve.stderr
    assert f"Error: the database {db_path} is damaged: SQLite's quick_check found" in serve.stderr
    assert "--skip-check" in serve.stderr

    info = obsctl(db_path, "db", "info", "--json")
    assert info.returncode == 1
    integrity = json.loads(info.stdout)["integrity"]
    assert integrity["quick_check"] == "damaged" and integrity["problems"]
    assert "is damaged" in info.stderr
    text = obsctl(db_path, "db", "info")
    assert "integrity\tDAMAGED" in text.stdout

    # --skip-check starts it anyway, and /health says the check was skipped.
    server = start_server_with(db_path, tmp_path, ["--skip-check"])
    try:
        health = requests.get(f"{server.url}/health", timeout=10).json()
        assert health["database"]["quick_check"] == "skipped"
    finally:
        server.stop()


def start_server_with(db_path, tmp_path, extra: list[str]):
    port = free_port()
    log = open(tmp_path / f"serve-{port}.log", "wb")  # noqa: SIM115 (the child's)
    process = subprocess.Popen([*OBSCTL, "--db", str(db_path), "serve", "--port", str(port), *extra],
                               stdout=log, stderr=subprocess.STDOUT)
    server = LiveServer(process, port, tmp_path / f"serve-{port}.log")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            requests.get(f"{server.url}/health", timeout=1)
            return server
        except requests.RequestException:
            time.sleep(0.1)
    server.stop()
    raise AssertionError(server.log())


def test_health_reports_the_check_of_an_intact_database(live_server, db_path, cli):
    server = live_server()
    health = requests.get(f"{server.url}/health", timeout=10).json()
    assert health["status"] == "ok"
    assert health["database"]["quick_check"] == "ok"
    assert health["database"]["checked_at"].endswith("Z")
    assert health["database"]["writes_waiting"] == 0
    assert "database quick_check: ok" in server.log()
    info = json.loads(cli("db", "info", "--json").stdout)
    assert info["integrity"]["quick_check"] == "ok" and info["integrity"]["problems"] == []
    skipped = json.loads(cli("db", "info", "--json", "--skip-check").stdout)
    assert skipped["integrity"]["quick_check"] == "skipped"


# A mistyped path, read-only storage -------------------------------------------------------------

READERS = [
    ["sessions", "list"], ["sessions", "show", "s1"], ["explain", "s1"], ["export", "s1"],
    ["compare", "s1", "s2"], ["analytics"], ["db", "info"], ["db", "backup", "{tmp}/copy.db"],
    ["alerts", "rules", "list"], ["alerts", "events"], ["webhooks", "list"],
    ["webhooks", "deliveries"], ["triage", "show", "s1"], ["triage", "batch"],
    ["postmortem", "show", "s1"], ["postmortem", "candidates"], ["sla", "list"],
    ["sla", "history"], ["sla", "summary"], ["scorecards"], ["scorecards", "show", "bot"],
]
CHANGERS = [
    ["prune", "--older-than", "30d"], ["alerts", "evaluate"], ["alerts", "ack", "1"],
    ["alerts", "rules", "remove", "1"], ["webhooks", "remove", "1"], ["webhooks", "test", "1"],
    ["sla", "remove", "bot", "error_rate"], ["sla", "check"],
]


@pytest.mark.parametrize("args", READERS + CHANGERS, ids=" ".join)
def test_commands_that_do_not_add_data_say_there_is_no_database(cli, tmp_path, args):
    missing = tmp_path / "typo" / "obsctl.db"


    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = CliRunner().invoke(cli_app, ["--db", str(missing), *argv])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == f"Error: no database at {missing}"
    assert not missing.parent.exists()


def test_commands_that_add_data_create_the_database(tmp_path):


    new = tmp_path / "new" / "obsctl.db"
    result = CliRunner().invoke(cli_app, ["--db", str(new), "alerts", "rules", "add", "--name", "r",
                                          "--metric", "error_rate", "--operator", ">", "--threshold", "5"])
    assert result.exit_code == 0, result.output
    assert new.exists()


def test_a_read_only_open_cannot_write(db_path, db):
    ingest_events(db, [event("s1", event_id="e1")])
    reader = open_db_readonly(db_path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.conn.execute("DELETE FROM events")
        assert reader.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 1
    finally:
        reader.close()


def test_analytics_of_a_read_only_database_with_a_stale_rollup(db_path, db):
    ingest_events(db, [event("s1", event_id=f"e{i}", tokens_in=10, model="m") for i in range(10)])
    with db.conn:
        db.conn.execute("DELETE FROM events WHERE event_id IN ('e0', 'e1')")  # behind ingest's back
    stored_rollup = db.conn.execute("SELECT SUM(event_count) FROM event_stats").fetchone()[0]
    reader = open_db_readonly(db_path)
    try:
        assert get_analytics(reader)["model_usage"][0]["call_count"] == 8
    finally:
        reader.close()
    assert db.conn.execute("SELECT SUM(event_count) FROM event_stats").fetchone()[0] == stored_rollup
    assert get_analytics(db)["model_usage"][0]["call_count"] == 8  # and the writer repairs it


def unwritable_copy(db_path) -> Path:
    """A database in a directory (and a file) the reading process may not write to. As root,
    where permissions do not stop writes, the reader runs as `nobody` instead."""
    db = open_db(db_path)
    ingest_events(db, [event("s1", event_id="e1", agent_name="bot", tokens_in=5),
                       event("s2", event_id="e2", agent_name="bot", tokens_in=7)])
    db.close()
    directory = Path(tempfile.mkdtemp(prefix="obsctl-ro-"))
    shutil.copy(db_path, directory / "obsctl.db")
    os.chmod(directory / "obsctl.db", 0o444)
    os.chmod(directory, 0o555)
    return directory / "obsctl.db"


def as_reader(argv: list[str]) -> list[str]:
    """Root writes whatever the permissions say; without the capabilities that let it, the
    reader is held to them like any user."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv to drop the DAC capabilities")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner,-linux_immutable", "--", *argv]


@pytest.mark.parametrize("args", [["sessions", "list", "--json"], ["analytics", "--json"],
                                  ["db", "info", "--json"], ["explain", "s1", "--json"]], ids=" ".join)
def test_reading_commands_work_without_write_access(db_path, args):
    ro = unwritable_copy(db_path)
    try:
        done = subprocess.run(as_reader([*OBSCTL, "--db", str(ro), *args]), capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert orjson.loads(done.stdout)
        assert sorted(p.name for p in ro.parent.iterdir()) == ["obsctl.db"]
        if args[0] == "sessions":
            assert orjson.loads(done.stdout)["total"] == 2
        if args[0] == "db":
            info = orjson.loads(done.stdout)
            assert info["journal_mode"] == "wal" and info["integrity"]["quick_check"] == "ok"
        # Writing commands say why they cannot work, in one line.
        refused = subprocess.run(as_reader([*OBSCTL, "--db", str(ro), "alerts", "evaluate"]),
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert refused.stderr == (f"Error: cannot write to the database {ro}: it is read-only here "
                                  f"(permissions of the file or its directory, or a read-only "
                                  f"filesystem); reading commands still work\n")
    finally:
        os.chmod(ro.parent, 0o755)
        shutil.rmtree(ro.parent)


@needs_mounts
def test_reading_commands_work_on_a_read_only_filesystem(db_path, tmp_path):
    db = open_db(db_path)
    ingest_events(db, [event("s1", event_id="e1", agent_name="bot")])
    db.close()
    directory = db_path.parent
    script = (f'mount --bind {directory} {directory} && mount -o remount,ro,bind {directory} && '
              f'exec {" ".join(OBSCTL)} --db {db_path} sessions list --json')
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["total"] == 1
