"""Triage and postmortem latency at 1M events.

Copies the shared benchmark database (1M events in 20k sessions over 20 agents, the last 30
days), ingests one 500-event session for agent-00 started within the last day (so its
baseline is about 230 sessions of the previous 7 days), then measures through the service
layer, with a price table built per call as the HTTP routes and the CLI do:

- triage of that 500-event session        target p50 < 100 ms
- triage batch of the 10 most recent      target p50 < 1 s
- the postmortem of the same session, and the postmortem candidates list (no target)
- GET /triage/<id> through the Flask app in-process (JSON encoding included)

Targets are judged on the median (p50); the script exits 1 when one is missed.

    .venv/bin/python bench/triage.py [--iterations 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _dataset import fresh_copy, generate_events
from _report import Report, sized, timed

TRIAGE_TARGET_MS = 100.0
BATCH_TARGET_MS = 1000.0
SESSION_EVENTS = 500


def percentile(samples: list[float], pct: int) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(samples)
    return ordered[max(1, (pct * len(ordered) + 99) // 100) - 1]



def line(report: Report, label: str, samples: list[float], target: float | None = None) -> str:
    p50, p95 = percentile(samples, 50), percentile(samples, 95)
    if target is not None:
        report.check(label, p50, "<", target, unit=" ms", basis=f"p50 of {len(samples)}")
    return f"  {label:<44} p50 {p50:8.1f} ms   p95 {p95:8.1f} ms  (n={len(samples)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=sized(30, 6))
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    args = parser.parse_args()
    report = Report("Triage and postmortem")

    from obsctl.config import Settings
    from obsctl.services.ingest import ingest_events
    from obsctl.services.postmortem import postmortem_candidates, postmortem_session
    from obsctl.services.pricing import pricer_for
    from obsctl.services.triage import triage_batch, triage_session
    from obsctl.store.sqlite.db import open_db
    from obsctl.store.sqlite.sqlite_store import store_over

    with tempfile.TemporaryDirectory(prefix="obsctl-bench-triage-") as tmp:
        started = time.perf_counter()
        path = fresh_copy(Path(tmp))
        db = open_db(path)  # applies any migration newer than the cached database
        store = store_over(db)
        events = list(generate_events(1, SESSION_EVENTS, seed=500, agents=20, days=1,
                                      now=datetime.now(UTC)))
        ingest_events(store, events)
        session_id = events[0]["session_id"]
        agent = events[0]["agent_name"]
        settings = Settings.from_env({}, db_path=path)
        total = db.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        report.figure(f"setup: copied and prepared a {total:,}-event database in "
              f"{time.perf_counter() - started:.1f} s; session {session_id} ({len(events)} events, {agent})")

        triaged = triage_session(store, session_id, pricer=pricer_for(settings))
        report.figure(f"the session: health {triaged['health_score']} ({triaged['grade']}, "
                      f"{triaged['severity']}), {len(triaged['findings'])} findings, "
                      f"baseline {triaged['baseline']['sessions']} sessions")

        n = args.iterations
        rows = [
            line(report, f"triage of a {len(events)}-event session",
                 timed(lambda: triage_session(store, session_id, pricer=pricer_for(settings)), n),
                 TRIAGE_TARGET_MS),
            line(report, "triage batch, 10 most recent sessions",
                 timed(lambda: triage_batch(store, pricer=pricer_for(settings), limit=10), max(5, n // 3)),
                 BATCH_TARGET_MS),
            line(report, f"postmortem of the {len(events)}-event session",
                 timed(lambda: postmortem_session(store, session_id, pricer=pricer_for(settings)), n)),
            line(report, "postmortem candidates (all sessions)",
                 timed(lambda: postmortem_candidates(store), n)),
        ]
        from obsctl.web.app import create_app

        app = create_app(Settings.from_env({"OBSCTL_RATE_LIMITS": "off"}, db_path=path))
        client = app.test_client()

        def http_triage():
            assert client.get(f"/triage/{session_id}").status_code == 200

        rows.append(line(report, "GET /triage/<id> (Flask app in-process)", timed(http_triage, n)))
        app.extensions["obsctl"].store.close()
        db.close()
    for row in ["", f"results ({total:,}-event database):", *rows]:
        report.figure(row)
    report.finish(args.report)


if __name__ == "__main__":
    main()
