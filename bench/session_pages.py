"""Deep pages of the session list at 1M events: page 1, and page 500 reached by offset or by
the keyset cursor (`next`), for a few sorts and filters. Prints the p50 and p95 of each, and
the cursor's speed-up over the offset at page 500 (the reference measured in the same run).

    python bench/session_pages.py [--iterations 30] [--limit 20] [--page 500]

The database is the shared benchmark one (bench/_dataset.py: 20k sessions, 1M events); 20
sessions a page puts page 500 at row 9,981.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from _dataset import ROOT, bench_db_path
from _report import Report, sized, timed

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CASES = {
    "newest first": {},
    "sort -tokens": {"sort": "-tokens"},
    "sort -duration": {"sort": "-duration"},
    "has errors, newest first": {"has_errors": True},
    "model gpt-4o, sort errors": {"model": "gpt-4o", "sort": "errors"},
}


def p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]



def cursor_at(store, filters: dict, limit: int, page: int) -> str:
    """The cursor that opens page `page` (walking the pages before it once, untimed)."""
    from obsctl.services.sessions import list_sessions

    cursor = None
    for _ in range(page - 1):
        cursor = list_sessions(store, limit=limit, cursor=cursor, **filters)["next"]
        if cursor is None:
            raise SystemExit(f"fewer than {page} pages of {limit}")
    return cursor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--page", type=int, default=sized(500, 10))
    parser.add_argument("--report", help="append the Markdown section to this file (else BENCH_REPORT)")
    args = parser.parse_args()
    report = Report("Session list pages (filters, sorts, cursor)")

    from obsctl.services.sessions import list_sessions
    from obsctl.store import open_store

    store = open_store(str(bench_db_path()))  # applies new migrations (indexes) once
    with store.transaction():
        events = store.maintenance.table_counts()["events"]
    report.figure(f"session list at {events:,} events, {args.limit} a page, page {args.page}, "
                  f"{args.iterations} runs each (ms)")
    report.figure(f"{'case':28} {'page 1 p50':>11} {'offset p50':>11} {'cursor p50':>11} {'offset p95':>11} "
                  f"{'cursor p95':>11} {'speed-up':>9}")
    deepest = {}
    for name, filters in CASES.items():
        deep = (args.page - 1) * args.limit
        cursor = cursor_at(store, filters, args.limit, args.page)
        by_offset = list_sessions(store, limit=args.limit, offset=deep, **filters)
        by_cursor = list_sessions(store, limit=args.limit, cursor=cursor, **filters)
        assert by_offset["sessions"] == by_cursor["sessions"], name  # the same page either way
        first = timed(lambda f=filters: list_sessions(store, limit=args.limit, **f), args.iterations)
        offset = timed(lambda f=filters, n=deep: list_sessions(store, limit=args.limit, offset=n, **f),
                       args.iterations)
        keyset = timed(lambda f=filters, c=cursor: list_sessions(store, limit=args.limit, cursor=c, **f),
                       args.iterations)
        report.figure(f"{name:28} {statistics.median(first):11.1f} {statistics.median(offset):11.1f} "
                      f"{statistics.median(keyset):11.1f} {p(offset, 0.95):11.1f} {p(keyset, 0.95):11.1f} "
                      f"{statistics.median(offset) / statistics.median(keyset):8.1f}x")
        deepest[name] = statistics.median(keyset)
    report.check(f"newest first, page {args.page} by cursor", deepest["newest first"], "<", 20, unit=" ms",
                 basis=f"p50 of {args.iterations}")
    report.check(f"slowest case, page {args.page} by cursor", max(deepest.values()), "<", 300, unit=" ms",
                 basis=f"p50 of {args.iterations}")
    report.finish(args.report)


if __name__ == "__main__":
    main()
