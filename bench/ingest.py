"""Ingest throughput: `obsctl ingest` vs a raw sqlite3 executemany reference, memory for 1M
events, and HTTP ingest through a real `obsctl serve`.

Run: .venv/bin/python bench/ingest.py [--events 200000] [--rss-events 1000000] [--runs 3] [--skip-http]
The reference inserts into obsctl's schema, which since m036 writes no search index in the
ingest transaction: it is the raw reference without a search index. obsctl's figures include
search: the CLI indexes what it stored before it exits, the server indexes in the background.

Targets (issue 35): CLI >= 80% of the reference; HTTP >= 75% of it and >= 10k events/s
(batches of 1000, 4 client threads, limits lifted); peak RSS < 60 MB at 1M events (issue 15).
Throughputs are judged on the median of --runs runs (the reference and the CLI alternate, each
a fresh process); the script exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dataset import ROOT, write_jsonl  # noqa: E402
from _report import Report, median, sized  # noqa: E402

OBSCTL = [sys.executable, "-m", "obsctl"]


def reference_ingest(jsonl: Path, db_file: Path) -> float:
    """Parse the file and insert every event with one executemany in one transaction."""
    import sqlite3

    from obsctl.store.sqlite.db import open_db

    open_db(db_file).close()
    started = time.perf_counter()
    conn = sqlite3.connect(db_file)
    conn.execute("PRAGMA synchronous = NORMAL")
    rows, sessions = [], {}
    dumps = orjson.dumps
    with open(jsonl, "rb") as f:
        for line in f:
            e = orjson.loads(line)
            sid = e["session_id"]
            sessions.setdefault(sid, (sid, e.get("agent_name") or "unknown", e["timestamp"]))
            rows.append((
                e["event_id"], sid, e["event_type"], e["timestamp"], e.get("model"),
                e.get("tokens_in"), e.get("tokens_out"), e.get("duration_ms"),
                *(dumps(e[k]).decode() if e.get(k) is not None else None
                  for k in ("input_data", "output_data", "tool_call", "decision_trace", "metadata")),
            ))
    with conn:
        conn.executemany("INSERT INTO sessions (session_id, agent_name, started_at) VALUES (?,?,?)",
                         sessions.values())
        conn.executemany(
            "INSERT INTO events (event_id, session_id, event_type, timestamp, model, tokens_in, "
            "tokens_out, duration_ms, input_data, output_data, tool_call, decision_trace, metadata) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    conn.close()
    return time.perf_counter() - started


def run_measured(argv: list[str]) -> tuple[float, float]:
    """Wall time and peak RSS (MB) of a child process, started from this small process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(argv)}")
    return elapsed, usage.ru_maxrss / 1024


def cli_ingest(jsonl: Path, db_file: Path) -> tuple[float, float]:
    """Wall time of `obsctl ingest FILE` and its peak RSS in MB."""
    return run_measured([*OBSCTL, "--db", str(db_file), "ingest", "--quiet", str(jsonl)])


def http_ingest(events: list[dict], where: Path | str, tmp: Path | None = None, *, instances: int = 1,
                threads: int = 4, batch: int = 1000) -> float:
    """Seconds to POST `events` to `instances` real `obsctl serve` processes on `where` (a
    SQLite file or a PostgreSQL URL), `threads` keep-alive clients per instance."""
    import http.client

    sys.path.insert(0, str(ROOT / "tests"))
    from live_server import start_server

    logs = tmp or Path(where).parent
    servers = [start_server(where, logs, {"OBSCTL_RATE_LIMITS": "off"}, threads=4) for _ in range(instances)]
    try:
        bodies = [orjson.dumps({"events": events[i:i + batch]}) for i in range(0, len(events), batch)]
        lock = threading.Lock()
        failures = []

        def worker(n: int):
            # http.client with keep-alive: a light client, so the figure is the server's.
            conn = http.client.HTTPConnection("127.0.0.1", servers[n % instances].port, timeout=60)
            while True:
                with lock:
                    if not bodies:
                        conn.close()
                        return
                    body = bodies.pop()
                conn.request("POST", "/events", body=body, headers={"Content-Type": "application/json"})
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    failures.append(response.status)

        started = time.perf_counter()
        pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads * instances)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        elapsed = time.perf_counter() - started
        if failures:
            raise SystemExit(f"HTTP ingest had failures: {failures[:5]}")
        return elapsed
    finally:
        for server in servers:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=sized(200_000, 5_000))
    parser.add_argument("--rss-events", type=int, default=sized(1_000_000, 10_000))
    parser.add_argument("--http-events", type=int, default=sized(100_000, 5_000))
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    parser.add_argument("--reference", nargs=2, metavar=("JSONL", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference:
        reference_ingest(Path(args.reference[0]), Path(args.reference[1]))
        return
    report = Report("Ingest throughput")

    with tempfile.TemporaryDirectory(prefix="obsctl-bench-") as tmp:
        tmp = Path(tmp)
        jsonl = tmp / "events.jsonl"
        n = write_jsonl(jsonl, args.events // 50, seed=7)
        size_mb = jsonl.stat().st_size / 1e6
        report.figure(f"input: {n} events, {size_mb:.1f} MB JSONL; {args.runs} runs of each")

        # Both run as fresh child processes (interpreter start-up included in both), alternating
        # so that load from elsewhere weighs on both alike; each run writes a new database.
        refs, clis, rss = [], [], []
        for run in range(args.runs):
            ref, _ = run_measured([sys.executable, __file__, "--reference", str(jsonl),
                                   str(tmp / f"ref{run}.db")])
            cli, peak = cli_ingest(jsonl, tmp / f"cli{run}.db")
            refs.append(ref)
            clis.append(cli)
            rss.append(peak)
        ref, cli = median(refs), median(clis)
        report.figure(f"reference (orjson + executemany, one transaction): {n / ref:10,.0f} events/s "
                      f"(median {ref:.2f}s)")
        report.figure(f"obsctl ingest (CLI, validated, idempotent):        {n / cli:10,.0f} events/s "
                      f"(median {cli:.2f}s, peak RSS {max(rss):.0f} MB)")
        report.check("CLI throughput / reference", 100 * ref / cli, ">=", 80, unit="%",
                     basis=f"medians of {args.runs}", fmt=".0f")

        if args.rss_events:
            big = tmp / "big.jsonl"
            nb = write_jsonl(big, args.rss_events // 50, seed=8)
            t_big, rss_big = cli_ingest(big, tmp / "big.db")
            big.unlink()
            report.figure(f"obsctl ingest of {nb} events: {nb / t_big:,.0f} events/s, "
                          f"peak RSS {rss_big:.0f} MB")
            report.check(f"peak RSS at {nb:,} events", rss_big, "<", 60, unit=" MB",
                         basis="one run", fmt=".0f")

        if not args.skip_http:
            with open(jsonl, "rb") as lines:
                events = [orjson.loads(line) for _, line in zip(range(args.http_events), lines)]
            rates = [len(events) / http_ingest(events, tmp / f"http{run}.db") for run in range(args.runs)]
            report.figure(f"HTTP POST /events (batches of 1000, 4 client threads, 4 server threads): "
                          f"{median(rates):,.0f} events/s median of {', '.join(f'{r:,.0f}' for r in rates)}")
            report.check("HTTP ingest", median(rates), ">=", 10_000, unit=" events/s",
                         basis=f"median of {args.runs}", fmt=",.0f")
            # Issue 35: the server against the raw reference of the same run (the Node service
            # this spec was written from reaches 0.44 of it).
            report.check("HTTP ingest / reference", 100 * median(rates) / (n / ref), ">=", 75, unit="%",
                         basis=f"medians of {args.runs}", fmt=".0f")
    report.finish(args.report)

if __name__ == "__main__":
    main()
