"""`obsctl --url URL ingest`: the same summary, rejections and exit code as local ingest, each
event stored once however often a file is sent, and bounded batches the server accepts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import orjson
import pytest

from tests.conftest import free_port, start_server
from tests.obsctl.remote.conftest import _invoke
from tests.store_support import open_any


def _events(prefix: str, sessions: int, per_session: int, *, ids: bool) -> list[dict]:
    events = []
    for s in range(sessions):
        for i in range(per_session):
            event = {"session_id": f"{prefix}-{s}", "event_type": "llm_call", "agent_name": "bot",
                     "timestamp": f"2026-11-20T10:{s % 60:02d}:{i % 60:02d}.000Z", "tokens_in": i,
                     "model": "gpt-4o"}
            if ids:
                event["event_id"] = f"{prefix}-{s}-{i}"
            events.append(event)
    return events


def _write(path, events, extra: bytes = b"") -> str:
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events) + extra)
    return str(path)


def _stored(db_url: str, prefix: str) -> tuple[int, int]:
    """(events, sum of session event counts) of the sessions named `prefix`-*."""
    store = open_any(db_url)
    try:
        conn = store.conn
        events = conn.execute("SELECT COUNT(*) FROM events WHERE session_id LIKE ?", [f"{prefix}-%"]).fetchone()[0]
        counted = conn.execute("SELECT COALESCE(SUM(event_count), 0) FROM sessions WHERE session_id LIKE ?",
                               [f"{prefix}-%"]).fetchone()[0]
    finally:
        store.close()
    return events, int(counted)


def test_summary_rejections_and_exit_code_match_local_ingest(remote, tmp_path):
    bad = (b'{"session_id": "mixed-9", "event_type": "x", "tokens_in": -1}\nnot json\n'
           b'{"session_id": "mixed-9", "event_type": "llm_call", "colour": "red"}\n')
    source = _write(tmp_path / "mixed.jsonl", _events("mixed", 3, 4, ids=False), bad)
    fresh = str(tmp_path / "fresh.db")
    here = _local_fresh(fresh, source)
    there = remote.remote("ingest", source)
    assert (there.exit_code, there.stdout, there.stderr) == (here.exit_code, here.stdout, here.stderr)
    assert there.exit_code == 1 and "mixed.jsonl:14: rejected: malformed JSON" in there.stderr
    assert "ingested 13 events into 4 sessions (13 new, 0 duplicates, 2 rejected)" in there.stderr
    assert _stored(remote.db_url, "mixed") == (13, 13)


def _local_fresh(db: str, source: str):
    """Ingest into a new database: the events are as new there as on the server."""
    return _invoke(["--db", db, "ingest", source], None, None)


def test_events_without_ids_are_stored_once_however_often_the_file_is_sent(remote, tmp_path):
    source = _write(tmp_path / "noid.jsonl", _events("noid", 4, 5, ids=False))
    first = remote.remote("ingest", source, "--json")
    again = remote.remote("ingest", source, "--json")
    assert orjson.loads(first.stdout) == {"events": 20, "stored": 20, "duplicates": 0, "rejected": 0,
                                          "sessions": 4}
    assert orjson.loads(again.stdout) == {"events": 20, "stored": 0, "duplicates": 20, "rejected": 0,
                                          "sessions": 4}
    assert _stored(remote.db_url, "noid") == (20, 20)


def test_strict_stores_nothing_when_a_record_is_bad(remote, tmp_path):
    source = _write(tmp_path / "strict.jsonl", _events("strict", 2, 3, ids=True), b"{oops\n")
    result = remote.remote("ingest", source, "--strict")
    assert result.exit_code == 1
    assert "strict.jsonl:7: rejected" in result.stderr and "nothing was stored" in result.stderr
    assert _stored(remote.db_url, "strict") == (0, 0)


def test_a_killed_and_rerun_ingest_stores_each_event_once(remote, tmp_path):
    events = _events("killed", 400, 25, ids=False)  # 10,000 events, 10 batches of 1,000
    source = _write(tmp_path / "big.jsonl", events)
    env = {**os.environ, "OBSCTL_URL": remote.url}
    env.pop("OBSCTL_DB", None)
    env.pop("OBSCTL_DATABASE_URL", None)
    process = subprocess.Popen([sys.executable, "-m", "obsctl", "ingest", source, "--batch-size", "500"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _stored(remote.db_url, "killed")[0] < 1000 and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    partial = _stored(remote.db_url, "killed")[0]
    assert 0 < partial < len(events), "the run was not cut midway; make the file larger"
    rerun = remote.remote("ingest", source, "--json")
    assert rerun.exit_code == 0, rerun.output
    summary = orjson.loads(rerun.stdout)
    assert summary["stored"] + summary["duplicates"] == len(events) and summary["duplicates"] >= partial
    assert _stored(remote.db_url, "killed") == (len(events), len(events))


@pytest.mark.sqlite_only
def test_a_batch_over_the_servers_body_limit_is_sent_in_halves(tmp_path):
    db = tmp_path / "small.db"
    server = start_server(db, tmp_path, {"OBSCTL_RATE_LIMITS": "off", "OBSCTL_MAX_BODY_BYTES": "20000"})
    try:
        events = _events("halves", 10, 20, ids=True)
        for event in events:
            event["input_data"] = {"prompt": "x" * 300}
        source = _write(tmp_path / "wide.jsonl", events)
        result = _invoke(["--url", server.url, "ingest", source, "--json"], None, None)
        assert result.exit_code == 0, result.output
        assert orjson.loads(result.stdout)["stored"] == 200
        assert _stored(str(db), "halves") == (200, 200)
    finally:
        server.stop()


def test_an_unreachable_server_is_one_line_and_exit_1(tmp_path):
    source = _write(tmp_path / "few.jsonl", _events("down", 1, 2, ids=True))
    result = _invoke(["--url", f"http://127.0.0.1:{free_port()}", "ingest", source], None,
                     None)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: cannot reach the obsctl server at http://127.0.0.1:")
    assert result.stderr.count("\n") == 1


def _ids(db_url: str, prefix: str) -> list[str]:
    store = open_any(db_url)
    try:
        return sorted(r[0] for r in store.conn.execute(
            "SELECT event_id FROM events WHERE session_id LIKE ?", [f"{prefix}-%"]).fetchall())
    finally:
        store.close()


def test_local_and_remote_ingest_give_a_file_the_same_ids(remote, tmp_path):
    """One id rule for file ingest: `line-N-<hash of the content>` on every path and store, so a
    file ingested locally twice is stored once, and its events have the ids the server gives."""
    events = _events("sameid", 2, 3, ids=False)
    events.append(dict(events[0]))  # an identical record on another line stays its own event
    source = _write(tmp_path / "sameid.jsonl", events)
    fresh = str(tmp_path / "local.db")
    assert _local_fresh(fresh, source).exit_code == 0
    again = _invoke(["--db", fresh, "ingest", source, "--json"], None, None)
    assert orjson.loads(again.stdout) == {"events": 7, "stored": 0, "duplicates": 7, "rejected": 0,
                                          "sessions": 2}
    assert remote.remote("ingest", source).exit_code == 0
    local_ids, remote_ids = _ids(fresh, "sameid"), _ids(remote.db_url, "sameid")
    assert local_ids == remote_ids and len(set(local_ids)) == 7
    assert all(i.startswith("line-") for i in local_ids)
    assert sorted(int(i.split("-")[1]) for i in local_ids) == list(range(1, 8))
