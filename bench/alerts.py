"""Benchmark: evaluate 50 alert rules over the 1M-event benchmark database.

Target: under 1 s for one evaluation of all 50 rules. The rules mix the seven metrics, windows
of 15 minutes to 24 hours, and either no agent filter or one of the 20 agents. The evaluation
time is the dataset's busiest recent moment (the latest session start), so every window has
data. Rules are written into a private copy of the shared database, which stays pristine.

Judged on the median of --runs evaluations; exits 1 when the median misses the target.

Run: .venv/bin/python bench/alerts.py [--runs 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _dataset import bench_db_path, fresh_copy
from _report import Report, median, sized

from obsctl.config import Settings
from obsctl.services import alerts
from obsctl.services.alerts import rules as alert_rules
from obsctl.services.metrics import METRICS
from obsctl.store.sqlite.db import open_db
from obsctl.store.sqlite.sqlite_store import store_over
from obsctl.timeutil import parse_ts

TARGET_S = 1.0
N_RULES = 50
WINDOWS = (15, 60, 240, 1440)


def make_rules(store) -> None:
    metrics = list(METRICS)
    for i in range(N_RULES):
        agent = None if i % 3 == 0 else f"agent-{i % 20:02d}"
        alert_rules.create_rule(store, {
            "name": f"bench-{i}", "metric": metrics[i % len(metrics)], "operator": ">",
            # Thresholds no metric reaches, so every run evaluates all rules the same way;
            # one run with firing rules is timed separately below.
            "threshold": 1e12, "window_minutes": WINDOWS[i % len(WINDOWS)],
            "cooldown_minutes": 0, "agent_filter": agent,
        })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=sized(5, 3))
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    args = parser.parse_args()

    source = bench_db_path()
    with tempfile.TemporaryDirectory(prefix="obsctl-bench-alerts-") as tmp:
        t0 = time.perf_counter()
        path = fresh_copy(Path(tmp))
        copy_s = time.perf_counter() - t0
        db = open_db(path)
        store = store_over(db)
        settings = Settings.from_env({}, db_path=path)
        events = db.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        at = parse_ts(db.conn.execute("SELECT MAX(started_at) FROM sessions").fetchone()[0])
        make_rules(store)
        groups = {(r["window_minutes"], r["agent_filter"]) for r in alert_rules.list_rules(store)["rules"]}

        timings = []
        for _ in range(args.runs):
            started = time.perf_counter()
            body = alerts.evaluate_alerts(store, settings, at=at)
            timings.append(time.perf_counter() - started)
        statuses = {s: sum(1 for r in body["results"] if r["status"] == s)
                    for s in ("ok", "no_data", "fired", "cooldown")}

        # The same rules made to fire: adds the alert writes (no webhooks configured).
        db.conn.execute("UPDATE alert_rules SET threshold = -1")
        started = time.perf_counter()
        fired = alerts.evaluate_alerts(store, settings, at=at + timedelta(seconds=1))
        firing_s = time.perf_counter() - started
        db.close()

    first, best, mid = timings[0], min(timings), median(timings)
    report = Report("Alert evaluation (50 rules)")
    report.figure(f"database        {source.name}: {events:,} events (private copy made in {copy_s:.1f} s)")
    report.figure(f"rules           {N_RULES} rules, 7 metrics, windows "
                  f"{', '.join(f'{w} min' for w in WINDOWS)}, {len(groups)} distinct (window, agent) pairs")
    report.figure(f"evaluated at    {at.isoformat()} (latest session start)")
    report.figure(f"results         {statuses}")
    report.figure(f"evaluate (all 50 rules), {args.runs} runs: first {first * 1000:.0f} ms, "
                  f"median {mid * 1000:.0f} ms, best {best * 1000:.0f} ms")
    report.figure(f"with all 50 firing (alert writes): {firing_s * 1000:.0f} ms, fired {fired['fired']}")
    report.check("evaluate 50 rules", mid * 1000, "<", TARGET_S * 1000, unit=" ms",
                 basis=f"median of {args.runs}", fmt=".0f")
    report.finish(args.report)

if __name__ == "__main__":
    main()
