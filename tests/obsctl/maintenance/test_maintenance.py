"""Retention (prune), db info, db backup, and the access log."""

import json
import sqlite3
import threading
import time
from datetime import timedelta

import pytest
import requests

from obsctl.errors import InvalidInput
from obsctl.services.ingest import ingest_events
from obsctl.services.maintenance import parse_age, prune
from obsctl.timeutil import iso_minus
from tests.conftest import event
from tests.store_support import rollup_rows, sqlite_writer_free


def seed_ages(db):
    old = iso_minus(timedelta(days=40))
    older = iso_minus(timedelta(days=90))
    recent = iso_minus(timedelta(days=2))
    ingest_events(db, [
        event("old", model="gpt-4o", tokens_in=5, timestamp=older),
        event("old", timestamp=old),
        event("revived", timestamp=older),
        event("revived", timestamp=recent),  # recent activity keeps it
        event("new", model="gpt-4o", tokens_in=7, timestamp=recent),
    ])


def stats_rows(db):
    return rollup_rows(db.conn)


def test_prune_dry_run_counts_and_deletes_nothing(db):
    seed_ages(db)
    result = prune(db, "30d", dry_run=True)
    assert (result["sessions"], result["events"], result["dry_run"]) == (1, 2, True)
    assert db.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 5


def test_prune_deletes_inactive_sessions_and_keeps_rollup_exact(db):
    from obsctl.store.postgres import event_stats as pg_event_stats
    from obsctl.store.sqlite import event_stats

    seed_ages(db)
    result = prune(db, "30d")
    assert (result["sessions"], result["events"]) == (1, 2)
    remaining = {r[0] for r in db.conn.execute("SELECT session_id FROM sessions")}
    assert remaining == {"revived", "new"}
    assert db.conn.execute("SELECT COUNT(*) FROM events WHERE session_id = 'old'").fetchone()[0] == 0
    pruned_stats = stats_rows(db)
    with db.conn:
        (pg_event_stats if db.backend == "postgresql" else event_stats).rebuild(db.conn)
    assert pruned_stats == stats_rows(db)


def _writer_free(db) -> bool:
    """On SQLite, whether another connection could start writing now; True on PostgreSQL."""
    if db.backend != "sqlite":
        return True
    return sqlite_writer_free(db.conn.execute("PRAGMA database_list").fetchone()[2])


def test_a_huge_session_is_pruned_over_several_transactions_and_the_rollup_stays_exact(db, monkeypatch):
    from obsctl.services import maintenance
    from obsctl.store.postgres import event_stats as pg_event_stats
    from obsctl.store.sqlite import event_stats

    monkeypatch.setattr(maintenance, "PRUNE_BATCH_EVENTS", 10)
    old = iso_minus(timedelta(days=40))
    ingest_events(db, [event("huge", "llm_call" if i % 3 else "tool_call", model="gpt-4o", tokens_in=i,
                             event_id=f"h{i}", timestamp=f"{old[:17]}{i:02d}.000Z") for i in range(25)])
    seed_ages(db)
    steps = []

    def between(sessions, events):
        """After each transaction: the writer is free, and the oldest events went first."""
        oldest = db.conn.execute("SELECT event_id FROM events WHERE session_id = 'huge' "
                                 "ORDER BY timestamp LIMIT 1").fetchone()
        steps.append((sessions, events, oldest[0] if oldest else None, _writer_free(db)))

    result = prune(db, "30d", on_progress=between)
    assert (result["sessions"], result["events"]) == (2, 27)
    assert {r[0] for r in db.conn.execute("SELECT session_id FROM sessions")} == {"revived", "new"}
    if db.backend == "sqlite":  # one writer: at most 10 events a transaction, the oldest first
        events = [0, *(step[1] for step in steps)]
        assert all(0 <= later - earlier <= 10 for earlier, later in zip(events, events[1:], strict=False))
        assert ("h10", True) in [step[2:] for step in steps] and ("h20", True) in [step[2:] for step in steps]
        assert steps[-1][:2] == (2, 27) and len(steps) >= 4
    pruned_stats = stats_rows(db)
    with db.conn:
        (pg_event_stats if db.backend == "postgresql" else event_stats).rebuild(db.conn)
    assert pruned_stats == stats_rows(db)


@pytest.mark.parametrize("text,expected", [("30d", timedelta(days=30)), ("12h", timedelta(hours=12)),
                                           ("90m", timedelta(minutes=90)), ("2w", timedelta(weeks=2))])
def test_parse_age(text, expected):
    assert parse_age(text) == expected


@pytest.mark.parametrize("text", ["30", "d", "0d", "-3d", "3y", ""])
def test_parse_age_rejects_nonsense(text):
    with pytest.raises(InvalidInput):
        parse_age(text)


def test_prune_cli_json_and_text(db, cli):
    seed_ages(db)
    dry = cli("prune", "--older-than", "30d", "--dry-run", "--json")
    assert json.loads(dry.stdout)["sessions"] == 1
    real = cli("prune", "--older-than", "30d")
    assert real.exit_code == 0 and real.stdout.startswith("deleted 1 session and 2 events")
    assert cli("prune", "--older-than", "soon").exit_code == 2


@pytest.mark.parametrize("age", ["1000000d", "99999999999d", "36501d", "5215w", "876001h", "9" * 5000 + "m"])
def test_prune_refuses_an_age_beyond_a_century_as_a_usage_error(db, cli, age):
    seed_ages(db)
    result = cli("prune", "--older-than", age, "--dry-run")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for '--older-than': age must be at most 36500d (100 years" in result.stderr
    with pytest.raises(InvalidInput, match="at most 36500d"):
        prune(db, age, dry_run=True)


def test_prune_accepts_an_age_of_a_century(db, cli):
    seed_ages(db)
    result = cli("prune", "--older-than", "36500d", "--dry-run", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["sessions"] == 0
    assert cli("prune", "--older-than", "5214w", "--dry-run").exit_code == 0


def test_db_info(db, cli, db_path):
    seed_ages(db)
    info = json.loads(cli("db", "info", "--json").stdout)
    assert info["path"] == str(db_path.resolve())
    assert info["tables"]["sessions"] == 3 and info["tables"]["events"] == 5
    assert info["schema_version"] >= 2 and info["journal_mode"] == "wal"
    assert info["size_bytes"] > 0


@pytest.mark.sqlite_only
def test_db_backup_is_a_consistent_copy(db, cli, tmp_path):
    seed_ages(db)
    dest = tmp_path / "copy.db"
    result = cli("db", "backup", str(dest))
    assert result.exit_code == 0, result.output
    copy = sqlite3.connect(dest)
    assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert copy.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 5
    again = cli("db", "backup", str(dest))
    assert again.exit_code == 1 and "already exists" in again.stderr


@pytest.mark.postgresql_only
def test_db_backup_on_postgresql_points_to_pg_dump(db, cli, tmp_path):
    dest = tmp_path / "copy.db"
    result = cli("db", "backup", str(dest))
    assert result.exit_code == 1 and "pg_dump -Fc" in result.stderr
    assert not dest.exists()


def test_prune_forgets_the_pruned_event_ids(db):
    # An event id pruned with its session is stored again when it comes back (on PostgreSQL
    # the ids live in event_keys too, which prune must empty of them).
    ingest_events(db, [event("gone", event_id="e-old", timestamp=iso_minus(timedelta(days=90)))])
    assert prune(db, "30d")["events"] == 1
    ingest_events(db, [event("gone", event_id="e-old", timestamp=iso_minus(timedelta(days=1)))])
    assert [e["event_id"] for e in db.sessions.iter_session_events("gone")] == ["e-old"]


@pytest.mark.postgresql_only
def test_prune_drops_the_weeks_of_pruned_sessions_whole_on_postgresql(db):
    from obsctl.store.postgres import event_stats as pg_event_stats
    from obsctl.store.postgres import partitions

    gone, shared, kept = (iso_minus(timedelta(days=d)) for d in (120, 60, 2))
    ingest_events(db, [
        event("a", event_id="a1", model="m", tokens_in=3, duration_ms=1.5, timestamp=gone),
        event("a", event_id="a2", timestamp=shared),
        event("b", event_id="b1", timestamp=shared),  # b survives: its week stays
        event("b", event_id="b2", timestamp=kept),
    ])
    weeks = {ts: partitions.partition_name(partitions.week_of(ts)) for ts in (gone, shared, kept)}
    assert set(weeks.values()) <= partitions.existing(db.conn)
    assert prune(db, "30d")["events"] == 2
    present = partitions.existing(db.conn)
    assert weeks[gone] not in present and {weeks[shared], weeks[kept]} <= present
    assert [e["event_id"] for e in db.sessions.iter_session_events("b")] == ["b1", "b2"]
    assert db.conn.execute("SELECT event_id FROM event_keys ORDER BY 1").fetchall() == [("b1",), ("b2",)]
    assert db.conn.execute("SELECT events FROM event_totals").fetchone()[0] == 2
    kept_stats = stats_rows(db)
    pg_event_stats.rebuild(db.conn)
    assert stats_rows(db) == kept_stats
    # The dropped week takes events again.
    ingest_events(db, [event("a", event_id="a1", timestamp=gone)])
    assert [e["event_id"] for e in db.sessions.iter_session_events("a")] == ["a1"]


def test_backup_while_the_server_writes(live_server, tmp_path, db_path, cli):
    server = live_server({"OBSCTL_RATE_LIMITS": "off"})
    stop = threading.Event()
    acknowledged = []

    def writer():
        i = 0
        while not stop.is_set() and i < 200:
            batch = [event(f"w{i}", event_id=f"w{i}-{j}", input_data={"p": "x" * 200}) for j in range(100)]
            if requests.post(f"{server.url}/events", json={"events": batch}, timeout=30).status_code == 200:
                acknowledged.append(i)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while len(acknowledged) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert acknowledged, "the server acknowledged no batch"
        dest = tmp_path / "live-copy.db"
        assert cli("db", "backup", str(dest)).exit_code == 0
    finally:
        stop.set()
        thread.join()
    copy = sqlite3.connect(dest)
    assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # A consistent snapshot holds whole batches only.
    counts = copy.execute("SELECT COUNT(*) FROM events GROUP BY session_id").fetchall()
    assert counts and all(c == (100,) for c in counts)
    totals = copy.execute("SELECT SUM(event_count) FROM sessions").fetchone()[0]
    assert totals == copy.execute("SELECT COUNT(*) FROM events").fetchone()[0]


def test_access_log_line_per_request(live_server):
    server = live_server({"SERVICE_API_KEY": "top-secret-key"})
    requests.get(f"{server.url}/sessions", headers={"X-API-Key": "top-secret-key"}, timeout=10)
    requests.get(f"{server.url}/sessions/nope", headers={"X-API-Key": "wrong"}, timeout=10)
    server.stop()
    log = server.log()
    assert '"GET /sessions" 200' in log
    assert '"GET /sessions/nope" 401' in log
    assert "top-secret-key" not in log and "wrong" not in log


@pytest.mark.postgresql_only
def test_db_info_on_postgresql(db, cli):
    ingest_events(db, [event("s1", event_id="e1"), event("s1", event_id="e2")])
    info = json.loads(cli("db", "info", "--json").stdout)
    assert info["backend"] == "postgresql" and info["url"].startswith("postgresql://")
    from obsctl.store.postgres.schema import MIGRATIONS

    assert info["schema_version"] == len(MIGRATIONS) and info["integrity"]["quick_check"] == "ok"
    assert info["tables"]["sessions"] == 1 and info["tables"]["events"] == 2
    assert info["postgresql_version"].split(".")[0].isdigit() and info["size_bytes"] > 0
    plain = cli("db", "info").stdout
    assert plain.splitlines()[0].startswith("url\tpostgresql://") and "rows: events\t2" in plain
