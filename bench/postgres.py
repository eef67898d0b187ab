"""PostgreSQL against SQLite in the same run: HTTP ingest (one instance each, then two
instances sharing PostgreSQL), CLI ingest, and the query set at 1M events.

Run: .venv/bin/python bench/postgres.py [--http-events 100000] [--query-events 1000000] [--runs 3]
Needs PostgreSQL (OBSCTL_BENCH_PG_URL, default postgresql://postgres@127.0.0.1:5432/postgres);
each measurement works in a schema of its own, dropped afterwards.
Targets (issue 16): PostgreSQL HTTP ingest >= 50% of SQLite's in the same run; analytics at 1M
events < 300 ms p50; per-session reads (list, show, explain, export, compare) < 5 ms p50,
through the service layer. The script exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _dataset import ROOT, write_jsonl  # noqa: E402
from _report import Report, median, sized  # noqa: E402
from ingest import cli_ingest, http_ingest, run_measured  # noqa: E402

ADMIN_URL = os.environ.get("OBSCTL_BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


class Schema:
    """A fresh schema of the PostgreSQL database, dropped on exit."""

    def __init__(self):
        self.name = f"bench_{uuid.uuid4().hex[:10]}"
        separator = "&" if "?" in ADMIN_URL else "?"
        self.url = f"{ADMIN_URL}{separator}options=-csearch_path%3D{self.name}"

    def __enter__(self) -> str:
        return self.url

    def __exit__(self, *exc):
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.name}" CASCADE')


def query_set(where: str, iterations: int, analytics_iterations: int) -> dict[str, float]:
    """p50 (ms) of the read views through the service layer, on 50-event sessions."""
    from queries import service_cases, timed

    from obsctl.services.storage import open_store

    store = open_store(where, mode="read")
    try:
        page, _ = store.sessions.list_sessions(status=None, limit=2000, offset=0)
        ids = [s["session_id"] for s in page]
        rng = random.Random(7)
        picks = [rng.choice(ids) for _ in range(iterations + 2)]
        figures = {}
        for name, fn in service_cases(store, picks).items():
            figures[name] = median(timed(fn, analytics_iterations if name == "analytics" else iterations))
        return figures
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http-events", type=int, default=sized(100_000, 5_000))
    parser.add_argument("--cli-events", type=int, default=sized(100_000, 5_000))
    parser.add_argument("--query-events", type=int, default=sized(1_000_000, 20_000))
    parser.add_argument("--iterations", type=int, default=sized(100, 10))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    args = parser.parse_args()
    report = Report("PostgreSQL store")
    try:
        psycopg.connect(ADMIN_URL, connect_timeout=3).close()
    except psycopg.Error as exc:
        report.figure(f"skipped: no PostgreSQL at {ADMIN_URL} ({str(exc).strip().splitlines()[0]}); "
                      f"set OBSCTL_BENCH_PG_URL")
        report.finish(args.report)
        return
    with tempfile.TemporaryDirectory(prefix="obsctl-bench-pg-") as tmp:
        tmp = Path(tmp)
        jsonl = tmp / "events.jsonl"
        n = write_jsonl(jsonl, max(args.http_events, args.cli_events) // 50, seed=7)
        with open(jsonl, "rb") as lines:
            events = [orjson.loads(line) for _, line in zip(range(args.http_events), lines)]
        report.figure(f"input: {len(events)} events for HTTP, {n} for the CLI; {args.runs} alternating runs")

        sqlite_rates, pg_rates, pg2_rates = [], [], []
        for run in range(args.runs):
            sqlite_rates.append(len(events) / http_ingest(events, tmp / f"http{run}.db"))
            with Schema() as url:
                pg_rates.append(len(events) / http_ingest(events, url, tmp))
            with Schema() as url:
                pg2_rates.append(len(events) / http_ingest(events, url, tmp, instances=2))

        def listed(rates):
            return ", ".join(f"{r:,.0f}" for r in rates)

        report.figure(f"HTTP POST /events, SQLite, 1 instance:      {median(sqlite_rates):9,.0f} events/s "
                      f"({listed(sqlite_rates)})")
        report.figure(f"HTTP POST /events, PostgreSQL, 1 instance:  {median(pg_rates):9,.0f} events/s "
                      f"({listed(pg_rates)})")
        report.figure(f"HTTP POST /events, PostgreSQL, 2 instances: {median(pg2_rates):9,.0f} events/s "
                      f"({listed(pg2_rates)})")
        report.check("PostgreSQL / SQLite HTTP ingest", 100 * median(pg_rates) / median(sqlite_rates), ">=", 50,
                     unit="%", basis=f"medians of {args.runs}", fmt=".0f")

        sqlite_cli, pg_cli = [], []
        for run in range(args.runs):
            sqlite_cli.append(cli_ingest(jsonl, tmp / f"cli{run}.db")[0])
            with Schema() as url:
                pg_cli.append(run_measured([sys.executable, "-m", "obsctl", "--db", url, "ingest", "--quiet",
                                            str(jsonl)])[0])
        report.figure(f"obsctl ingest, SQLite: {n / median(sqlite_cli):9,.0f} events/s; PostgreSQL: "
                      f"{n / median(pg_cli):9,.0f} events/s ({100 * median(sqlite_cli) / median(pg_cli):.0f}%)")

        big = tmp / "big.jsonl"
        nb = write_jsonl(big, args.query_events // 50, seed=42)
        with Schema() as url:
            started = time.perf_counter()
            run_measured([sys.executable, "-m", "obsctl", "--db", url, "ingest", "--quiet", str(big)])
            report.figure(f"{nb:,} events ingested into PostgreSQL by the CLI in {time.perf_counter() - started:.0f} s")
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE")
            figures = query_set(url, args.iterations, max(5, args.iterations // 5))
        for name, value in figures.items():
            report.figure(f"PostgreSQL at {nb:,} events, {name}: p50 {value:.2f} ms")
        report.check(f"analytics at {nb:,} events (PostgreSQL)", figures.pop("analytics"), "<", 300,
                     unit=" ms", basis="p50, service layer", fmt=".1f")
        for name, value in figures.items():
            report.check(f"{name} at {nb:,} events (PostgreSQL)", value, "<", 5, unit=" ms",
                         basis="p50, service layer", fmt=".2f")
    report.finish(args.report)


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
