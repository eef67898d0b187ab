"""Query latency at 1M events: p50/p95 through the service layer and over HTTP.

Uses the shared benchmark database (1M events in 20k sessions over 20 agents, seeded, built
once and cached by _dataset.py). Views: sessions list, session detail, explain, export JSON
and CSV, compare (two 50-event sessions), analytics and incidents (the errors of the last 24
hours and of the last 7 days grouped across sessions). Targets: analytics and incidents
(views over the whole fleet) p50 < 300 ms, each per-session view p50 < 20 ms. The HTTP figures come from a real `obsctl serve`
(waitress) on 127.0.0.1 with rate limits off, one keep-alive client.

Reference measured in the same run: the analytics event sections computed by scanning the
events table (what the event_stats rollup replaces). Each view's target is judged on its
median (p50) through the service layer and over HTTP; the script exits 1 when one is missed.

    .venv/bin/python bench/queries.py [--iterations 200] [--sessions 200000]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _dataset import ROOT, bench_db_path
from _report import Report, median, sized

ANALYTICS_TARGET_MS = 300.0
SESSION_VIEW_TARGET_MS = 20.0
FLEET_VIEWS = ("analytics", "incidents 24h", "incidents 7d")

# What GET /analytics would cost without the rollup: three GROUP BYs over every event.
_NAIVE_EVENT_SECTIONS = (
    ("SELECT model, COUNT(*), SUM(tokens_in), SUM(tokens_out), AVG(duration_ms) FROM events "
     "WHERE model IS NOT NULL GROUP BY model"),
    ("SELECT event_type, COUNT(*) FROM events "
     "WHERE event_type NOT IN ('session_start', 'session_end') GROUP BY event_type"),
    "SELECT substr(timestamp, 12, 2), COUNT(*) FROM events GROUP BY 1",
)


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def timed(fn, iterations: int) -> list[float]:
    fn(0)  # warm-up (caches, first-query plans)
    samples = []
    for i in range(iterations):
        start = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def pick_sessions(db, count: int, seed: int = 7) -> list[str]:
    """Random 50-event sessions (the dataset's full-length ones)."""
    ids = [r[0] for r in db.conn.execute(
        "SELECT session_id FROM sessions WHERE event_count = 50 ORDER BY session_id")]
    rng = random.Random(seed)
    return [rng.choice(ids) for _ in range(count + 1)]


def service_cases(store, ids: list[str]):
    from obsctl.services.analytics import get_analytics
    from obsctl.services.incidents import list_incidents
    from obsctl.services.sessions import get_session, list_sessions
    from obsctl.services.sessions.compare import compare_sessions
    from obsctl.services.sessions.explain import explain_session
    from obsctl.services.sessions.export import export_session

    return {
        "sessions list": lambda i: list_sessions(store, limit=50, offset=(i % 20) * 50),
        "session detail": lambda i: get_session(store, ids[i]),
        "explain": lambda i: explain_session(store, ids[i]),
        "export json": lambda i: b"".join(export_session(store, ids[i], "json").chunks),
        "export csv": lambda i: b"".join(export_session(store, ids[i], "csv").chunks),
        "compare": lambda i: compare_sessions(store, ids[i], ids[i + 1]),
        "analytics": lambda i: get_analytics(store),
        "incidents 24h": lambda i: list_incidents(store, since="24h"),
        "incidents 7d": lambda i: list_incidents(store, since="7d"),
    }


def http_cases(base: str, ids: list[str]):
    import requests

    http = requests.Session()

    def get(path: str):
        response = http.get(base + path)
        response.raise_for_status()
        return response.content

    def compare(i: int):
        response = http.post(base + "/sessions/compare", json={"session_a": ids[i], "session_b": ids[i + 1]})
        response.raise_for_status()

    return {
        "sessions list": lambda i: get(f"/sessions?limit=50&offset={(i % 20) * 50}"),
        "session detail": lambda i: get(f"/sessions/{ids[i]}"),
        "explain": lambda i: get(f"/sessions/{ids[i]}/explain"),
        "export json": lambda i: get(f"/sessions/{ids[i]}/export"),
        "export csv": lambda i: get(f"/sessions/{ids[i]}/export?format=csv"),
        "compare": compare,
        "analytics": lambda i: get("/analytics"),
        "incidents 24h": lambda i: get("/incidents?since=24h"),
        "incidents 7d": lambda i: get("/incidents?since=7d"),
    }


def start_server(db_path: Path) -> tuple[subprocess.Popen, str]:
    import requests

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "OBSCTL_RATE_LIMITS": "off"}
    env.pop("SERVICE_API_KEY", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "obsctl", "--db", str(db_path), "serve", "--host", "127.0.0.1",
         "--port", str(port), "--threads", "4",
         # the start-up integrity check reads the whole file (minutes at 10M events); the
         # figures here are the queries'
         "--skip-check"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if requests.get(base + "/health", timeout=1).status_code == 200:
                return process, base
        except requests.RequestException:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("obsctl serve did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=sized(200, 20), help="samples per per-session view")
    parser.add_argument("--analytics-iterations", type=int, default=sized(30, 5))
    parser.add_argument("--sessions", type=int, default=None,
                        help="sessions of 50 events in the database (default: the shared 1M-event one; "
                             "200000 for the 10M-event figures, built once and cached, about 6 GB)")
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    args = parser.parse_args()
    report = Report("Query latency")

    from obsctl.store.sqlite.db import open_db
    from obsctl.store.sqlite.sqlite_store import store_over

    path = bench_db_path(args.sessions)
    db = open_db(path)  # applies pending migrations (the analytics rollup backfill) once
    store = store_over(db)
    totals = db.conn.execute("SELECT COUNT(*), SUM(event_count) FROM sessions").fetchone()
    report.figure(f"database: {path.name}: {totals[0]:,} sessions, {totals[1]:,} events")
    ids = pick_sessions(db, args.iterations)

    def runs(name: str) -> int:
        return args.analytics_iterations if name in FLEET_VIEWS else args.iterations

    results: dict[str, dict[str, list[float]]] = {}
    for name, fn in service_cases(store, ids).items():
        results[name] = {"service": timed(fn, runs(name))}

    reference = []
    for _ in range(3):
        start = time.perf_counter()
        for sql in _NAIVE_EVENT_SECTIONS:
            db.conn.execute(sql).fetchall()
        reference.append((time.perf_counter() - start) * 1000)
    db.close()

    process, base = start_server(path)
    try:
        for name, fn in http_cases(base, ids).items():
            results[name]["http"] = timed(fn, runs(name))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)

    report.figure()
    report.figure(f"{'view':<16}{'n':>5}{'service p50':>13}{'p95':>9}{'HTTP p50':>11}{'p95':>9}"
                  f"{'target p50':>12}")
    for name, samples in results.items():
        target = ANALYTICS_TARGET_MS if name in FLEET_VIEWS else SESSION_VIEW_TARGET_MS
        s50, s95 = percentile(samples["service"], 50), percentile(samples["service"], 95)
        h50, h95 = percentile(samples["http"], 50), percentile(samples["http"], 95)
        report.figure(f"{name:<16}{len(samples['service']):>5}{s50:>11.2f}ms{s95:>7.2f}ms{h50:>9.2f}ms"
                      f"{h95:>7.2f}ms{'< ' + format(target, '.0f') + ' ms':>12}")
    for name, samples in results.items():
        target = ANALYTICS_TARGET_MS if name in FLEET_VIEWS else SESSION_VIEW_TARGET_MS
        for layer in ("service", "http"):
            report.check(f"{name} ({layer})", percentile(samples[layer], 50), "<", target, unit=" ms",
                         basis=f"p50 of {len(samples[layer])}", fmt=".2f")
    naive = median(reference)
    rollup = median(results["analytics"]["service"])
    report.figure()
    report.figure(f"reference: analytics event sections by scanning all events: {naive:.0f} ms "
                  f"(median of 3) for those sections alone; the whole analytics view via the rollup: "
                  f"{rollup:.0f} ms median ({naive / rollup:.1f}x less)")
    report.finish(args.report)

if __name__ == "__main__":
    main()
