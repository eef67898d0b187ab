"""Full-text search latency at 1M events: `search_events` (the service behind `obsctl search`
and `GET /search`) on the shared benchmark database, plain, with an agent, with a window, and
both, for rare and common queries, newest first; rank order for rare queries.

Target: p50 under 50 ms for each query shape, newest first. The queries of the benchmark
data: `timeout` (about 1% of events: the timeout errors), `"HTTP 503"` (the failed tool
calls), `rate*` (rate_limit errors; a prefix), and `refund policy` and `fetch_url` (common:
tens of percent of the events). The database has 20 agents, so an agent filter keeps 5%.

With `--pg-events N` the same queries also run on PostgreSQL, on N events of the same
generator loaded into a fresh schema (figures only, no target: the 50 ms target is SQLite's).

    .venv/bin/python bench/search.py [--iterations 30] [--pg-events 200000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _dataset import bench_db_path
from _report import Report, median, sized, timed

TARGET_MS = 50.0
QUERIES = ("timeout", '"HTTP 503"', "rate*", "refund policy", "fetch_url")
SHAPES = {
    "plain": {},
    "--agent": {"agent": ["agent-07"]},
    "--since 1d": {"since": "1d"},
    "--agent --since 1d": {"agent": ["agent-07"], "since": "1d"},
}



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=sized(30, 5))
    parser.add_argument("--pg-events", type=int, default=0,
                        help="also measure PostgreSQL on this many events (needs OBSCTL_BENCH_PG_URL's server)")
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    args = parser.parse_args()
    report = Report("Full-text search")

    from obsctl.services.search import search_events
    from obsctl.store.sqlite.db import open_db
    from obsctl.store.sqlite.sqlite_store import store_over

    path = bench_db_path()
    started = time.perf_counter()
    db = open_db(path)  # applies pending migrations (m022 indexes the events) once
    store = store_over(db)
    total = db.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    indexed = db.conn.execute("SELECT COUNT(*) FROM events_fts_docsize").fetchone()[0]
    report.figure(f"database: {total:,} events, {indexed:,} indexed, {os.path.getsize(path) / 2**20:,.0f} MiB "
                  f"(opened in {time.perf_counter() - started:.1f} s)")
    report.figure("")
    for shape, filters in SHAPES.items():
        p50s = []
        for q in QUERIES:
            samples = timed(lambda q=q, f=filters: search_events(store, q, **f), args.iterations)
            found = search_events(store, q, **filters)["count"]
            p50s.append(median(samples))
            report.figure(f"  {shape:<20} {q:<16} p50 {median(samples):7.1f} ms  max {max(samples):7.1f} ms  "
                          f"({found} results)")
        report.check(f"search p50, {shape} (median of the queries' p50)", median(p50s), "<", TARGET_MS,
                     unit=" ms", basis=f"{len(QUERIES)} queries x {args.iterations} runs")
        report.check(f"search p50, {shape}, slowest query", max(p50s), "<", TARGET_MS, unit=" ms",
                     basis="its p50")
    report.figure("")
    for q in QUERIES[:3]:
        samples = timed(lambda q=q: search_events(store, q, sort="rank"), args.iterations)
        report.figure(f"  --sort rank          {q:<16} p50 {median(samples):7.1f} ms  max {max(samples):7.1f} ms")
    db.close()
    if args.pg_events:
        postgresql(report, args.pg_events, args.iterations)
    report.finish(args.report)


def postgresql(report: Report, events: int, iterations: int) -> None:
    from _dataset import generate_events
    from postgres import Schema

    from obsctl.services.ingest import store_events, validate_events
    from obsctl.services.search import search_events
    from obsctl.services.storage import open_store

    with Schema() as url:
        store = open_store(url)
        try:
            started, batch = time.perf_counter(), []
            for ev in generate_events(max(1, events // 50)):
                batch.append(ev)
                if len(batch) == 5000:
                    store_events(store, validate_events(batch)[0])
                    batch = []
            if batch:
                store_events(store, validate_events(batch)[0])
            import psycopg

            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("ANALYZE")  # the planner's statistics of the search expression
            report.figure("")
            report.figure(f"PostgreSQL: {events:,} events loaded in {time.perf_counter() - started:.0f} s")
            for shape, filters in SHAPES.items():
                for q in QUERIES:
                    samples = timed(lambda q=q, f=filters: search_events(store, q, **f), iterations)
                    report.figure(f"  {shape:<20} {q:<16} p50 {median(samples):7.1f} ms  max {max(samples):7.1f} ms")
        finally:
            store.close()


if __name__ == "__main__":
    main()
