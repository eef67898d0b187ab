"""Dashboard page render times at 1M events, server-side (the whole request through the app:
routing, login check, service calls, template), and the JavaScript a page ships.

Run: .venv/bin/python bench/dashboard.py [--iterations 30]
Targets (issue 21): every page p50 < 100 ms, the overview (24 hourly buckets) p50 < 300 ms; no
page ships more than 250 KB of JavaScript. The scorecard pages' first request in a minute
(nothing kept yet) is reported as "cold", without a target. Uses the Flask test client over a
private copy of the shared benchmark database (1M events in 20k sessions over 20 agents, spread over 30 days), with
a few alert rules, fired alerts and SLA snapshots added so those pages have rows. Each page's
figures are printed as soon as it is measured.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dataset import fresh_copy
from _report import Report, sized

PAGE_TARGET_MS = 100.0
OVERVIEW_TARGET_MS = 300.0
JS_BUDGET = 250 * 1024
# The scorecard pages come from a fleet computation kept a minute (services/dashboard.py
# ResultCache): the "cold" rows time a request that finds nothing kept (the first in a minute).
REPORTED_ONLY = ("scorecards cold", "scorecard cold")
COLD_ITERATIONS = 5


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5))) - 1]


def prepare(path: Path) -> list[str]:
    """Alert rules, fired alerts and SLA snapshots on the copy; 50-event session ids."""
    from obsctl.config import Settings
    from obsctl.services import sla
    from obsctl.services.alerts import evaluate_alerts
    from obsctl.services.alerts.rules import create_rule
    from obsctl.services.storage import open_store

    settings = Settings.from_env({}, db_path=str(path))
    store = open_store(settings)
    try:
        for i, metric in enumerate(("error_rate", "p95_duration_ms", "session_count")):
            create_rule(store, {"name": f"bench rule {i}", "metric": metric, "operator": ">=",
                                "threshold": 0, "window_minutes": 60})
        evaluate_alerts(store, settings)
        for agent in range(5):
            sla.put_target(store, {"agent_name": f"agent-{agent:02d}", "metric": "error_rate",
                                   "operator": "<=", "target_value": 5, "window_hours": 24})
        sla.check_sla(store, settings)
        with store.read_snapshot():
            rows = store.sessions.list_sessions(status=None, limit=200, offset=0)[0]
        return [r["session_id"] for r in rows if r["event_count"] >= 40]
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=sized(30, 5))
    parser.add_argument("--report", help="append the Markdown section here (default: $BENCH_REPORT)")
    args = parser.parse_args()
    report = Report("Dashboard pages")

    from obsctl.config import Settings
    from obsctl.services.dashboard import ResultCache
    from obsctl.web.app import create_app
    from obsctl.web.ui.views import CACHE_KEY

    with tempfile.TemporaryDirectory() as tmp:
        path = fresh_copy(Path(tmp))
        ids = prepare(path)
        rng = random.Random(7)
        picks = [rng.choice(ids) for _ in range(args.iterations + 2)]
        app = create_app(Settings.from_env({"OBSCTL_RATE_LIMITS": "off"}, db_path=str(path)))
        client = app.test_client()
        pages = {
            "overview 24h": lambda i: "/",
            "overview 6h": lambda i: "/?window=6h",
            "sessions": lambda i: f"/ui/sessions?page={1 + i % 20}",
            "sessions error": lambda i: "/ui/sessions?status=error",
            "session": lambda i: f"/ui/sessions/{picks[i]}",
            "triage": lambda i: f"/ui/sessions/{picks[i]}/triage",
            "postmortem": lambda i: f"/ui/sessions/{picks[i]}/postmortem",
            "compare": lambda i: f"/ui/compare?a={picks[i]}&b={picks[i + 1]}",
            "alerts": lambda i: "/ui/alerts",
            "webhooks": lambda i: "/ui/webhooks",
            "sla": lambda i: "/ui/sla",
            "scorecards": lambda i: "/ui/scorecards",
            "scorecard": lambda i: f"/ui/scorecards/agent-{i % 20:02d}",
            "scorecards cold": lambda i: "/ui/scorecards",
            "scorecard cold": lambda i: f"/ui/scorecards/agent-{i % 20:02d}",
        }
        results = {}
        for name, path_of in pages.items():
            client.get(path_of(0))  # warm-up
            samples = []
            cold = name in REPORTED_ONLY
            for i in range(COLD_ITERATIONS if cold else args.iterations):
                if cold:
                    app.extensions[CACHE_KEY] = ResultCache()
                started = time.perf_counter()
                response = client.get(path_of(i))
                samples.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    raise SystemExit(f"{name}: {path_of(i)} answered {response.status_code}")
            results[name] = samples
            print(f"  {name}: p50 {percentile(samples, 50):.1f} ms", flush=True)
        app.extensions["obsctl"].store.close()

    report.figure(f"{'page':<16}{'n':>4}{'p50':>10}{'p95':>10}{'target p50':>12}")
    for name, samples in results.items():
        target = "reported" if name in REPORTED_ONLY else \
            f"< {OVERVIEW_TARGET_MS if name.startswith('overview') else PAGE_TARGET_MS:.0f} ms"
        report.figure(f"{name:<16}{len(samples):>4}{percentile(samples, 50):>8.1f}ms"
                      f"{percentile(samples, 95):>8.1f}ms{target:>12}")
    for name, samples in results.items():
        if name in REPORTED_ONLY:
            continue
        target = OVERVIEW_TARGET_MS if name.startswith("overview") else PAGE_TARGET_MS
        report.check(name, percentile(samples, 50), "<", target, unit=" ms",
                     basis=f"p50 of {len(samples)}", fmt=".1f")
    static = Path(__file__).resolve().parent.parent / "obsctl" / "web" / "ui" / "static"
    shipped = sum(p.stat().st_size for p in (static / "vendor" / "uplot" / "uPlot.iife.min.js",
                                            static / "dashboard.js"))
    report.figure()
    report.check("JavaScript per page", shipped / 1024, "<", JS_BUDGET / 1024, unit=" KB", basis="bytes",
                 fmt=".1f")
    report.finish(args.report)


if __name__ == "__main__":
    main()
