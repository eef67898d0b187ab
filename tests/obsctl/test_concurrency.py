"""Concurrent writers on one database: HTTP clients, a CLI ingest and alert evaluation."""

import json
import subprocess
import sys
import threading

import requests

from tests.conftest import event, start_server
from tests.store_support import open_any


def test_http_clients_cli_ingest_and_evaluate_share_the_database(tmp_path, db_url, backend):
    big = tmp_path / "big.jsonl"
    with open(big, "w") as f:
        for i in range(30_000):
            f.write(json.dumps(event(f"cli-{i // 100}", event_id=f"cli-{i}", tokens_in=1,
                                     duration_ms=5, input_data={"p": "x" * 100})) + "\n")
    server = start_server(db_url, tmp_path, {"OBSCTL_RATE_LIMITS": "off"})
    obsctl = [sys.executable, "-m", "obsctl", "--db", str(db_url)]
    subprocess.run([*obsctl, "alerts", "rules", "add", "--name", "slow", "--metric", "avg_duration_ms",
                    "--operator", ">", "--threshold", "1", "--cooldown-minutes", "0"],
                   check=True, capture_output=True)
    statuses: list[int] = []
    errors: list[str] = []

    def client(worker: int):
        with requests.Session() as http:
            for b in range(15):
                batch = [event(f"http-{worker}-{b}", event_id=f"http-{worker}-{b}-{j}", tokens_in=1,
                               duration_ms=7) for j in range(200)]
                r = http.post(f"{server.url}/events", json={"events": batch}, timeout=60)
                statuses.append(r.status_code)
                if r.status_code != 200:
                    errors.append(r.text)

    evaluations = []

    def evaluate():
        for _ in range(5):
            done = subprocess.run([*obsctl, "alerts", "evaluate", "--json"], capture_output=True, text=True)
            evaluations.append(done)

    try:
        ingest = subprocess.Popen([*obsctl, "ingest", "--quiet", str(big)], stderr=subprocess.PIPE, text=True)
        threads = [threading.Thread(target=client, args=(w,)) for w in range(4)]
        threads.append(threading.Thread(target=evaluate))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        _, ingest_err = ingest.communicate(timeout=300)
    finally:
        server.stop()

    assert ingest.returncode == 0, ingest_err
    assert "locked" not in ingest_err
    assert statuses == [200] * 60, errors[:3]
    for done in evaluations:
        assert done.returncode == 0, done.stderr
        assert "locked" not in done.stderr
    db = open_any(db_url)
    try:
        conn = db.conn
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 30_000 + 4 * 15 * 200
        assert conn.execute("SELECT COUNT(DISTINCT event_id) FROM events").fetchone()[0] == 30_000 + 12_000
        assert conn.execute("SELECT SUM(event_count) FROM sessions").fetchone()[0] == 42_000
        if backend == "sqlite":
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()
