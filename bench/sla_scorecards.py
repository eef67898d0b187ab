"""Scorecards and SLA checks over the shared 1M-event benchmark database.

Run: .venv/bin/python bench/sla_scorecards.py [--repeat 5] [--days 7]
Targets (issue 6): scorecards for the 20 agents < 500 ms; an SLA check of 100 targets
(agent-00..agent-19 x 5 metrics) < 1 s.

Works on a private copy of the cached database (targets and snapshots are written). Times are
taken "now" = the newest event of the data set, so the windows hold the same data whenever the
benchmark runs. Figures are the best and the median of --repeat runs after one warm-up run;
targets are judged on the median, and the script exits 1 when one is missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dataset import fresh_copy
from _report import Report, median, sized

METRICS = ("error_rate", "p95_duration_ms", "avg_duration_ms", "avg_tokens", "avg_cost")
TARGETS_MS = {"scorecards (20 agents)": 500, "sla check (100 targets)": 1000}


def timed(fn, repeat: int) -> tuple[list[float], object]:
    """Run `fn` once to warm the page cache, then `repeat` timed runs."""
    fn()
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return times, result


def record(report: Report, name: str, times: list[float], note: str = "", *, judged: bool = True) -> None:
    report.figure(f"{name:<28} best {min(times):7.1f} ms  median {median(times):7.1f} ms"
                  f"{'  ' + note if note else ''}")
    target = TARGETS_MS.get(name) if judged else None
    if target is not None:
        report.check(name, median(times), "<", target, unit=" ms", basis=f"median of {len(times)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=sized(5, 3))
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    args = parser.parse_args()
    report = Report("Scorecards and SLA checks")

    from obsctl.config import Settings
    from obsctl.services import scorecards, sla
    from obsctl.services.sla.summary import sla_summary
    from obsctl.store.sqlite.db import open_db
    from obsctl.store.sqlite.sqlite_store import store_over
    from obsctl.timeutil import parse_ts

    with tempfile.TemporaryDirectory(prefix="obsctl-bench-sla-") as tmp:
        copied = time.perf_counter()
        path = fresh_copy(Path(tmp))
        db = open_db(path)  # applies any migration newer than the cached database
        store = store_over(db)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        report.figure(f"private copy of {path.name} ready in {time.perf_counter() - copied:.1f}s")
        settings = Settings.from_env({}, db_path=path)
        conn = db.conn
        events, sessions, agents = conn.execute(
            "SELECT (SELECT COUNT(*) FROM events), COUNT(*), COUNT(DISTINCT agent_name) FROM sessions"
        ).fetchone()
        at = parse_ts(conn.execute("SELECT MAX(last_event_at) FROM sessions").fetchone()[0])
        report.figure(f"{events} events, {sessions} sessions, {agents} agents; now = {at.isoformat()}")
        report.figure()

        times, cards = timed(lambda: scorecards.list_scorecards(store, settings, days=args.days, at=at),
                             args.repeat)
        analysed = sum(c["sessions_analyzed"] for c in cards)
        # The target is for the default 7-day window.
        record(report, "scorecards (20 agents)", times,
               f"{len(cards)} agents, {analysed} sessions in {args.days} days", judged=args.days == 7)
        times, card = timed(lambda: scorecards.get_scorecard(store, settings, "agent-07", days=args.days,
                                                             at=at), args.repeat)
        record(report, "scorecard show (1 agent)", times, f"{len(card['trend'])}-day trend")

        for i in range(20):
            for metric in METRICS:
                sla.put_target(store, {"agent_name": f"agent-{i:02d}", "metric": metric,
                                    "operator": "<=", "target_value": 1000.0})
        times, checked = timed(lambda: sla.check_sla(store, settings, at=at), args.repeat)
        record(report, "sla check (100 targets)", times,
               f"{len(checked['results'])} targets: {checked['passed']} pass, "
               f"{checked['failed']} fail, {checked['no_data']} no data")
        times, summary = timed(lambda: sla_summary(store), args.repeat)
        record(report, "sla summary", times, f"{summary['targets']} targets, "
               f"{len(summary['worst_offenders'])} offenders")
        times, history = timed(lambda: sla.sla_history(store, at=at), args.repeat)
        record(report, "sla history (168 h)", times, f"{history['total']} snapshots")
        db.close()
    report.finish(args.report)


if __name__ == "__main__":
    main()
