"""The garbage collector's policy for bulk work (`obsctl serve`, `printq serve`, `obsctl ingest`).

Ingest allocates tens of thousands of short-lived containers per batch (the parsed events),
nearly all freed by reference counting; with CPython's default thresholds the cyclic collector
still runs every 700 allocations and, now and then, walks every long-lived object of the
process. Measured on one 100,000-event stream: parsing 0.7 -> 0.2 s and validation 1.2 -> 0.4 s
of CPU with the policy below. The objects alive once start-up is done (modules, the app, the
routes) are moved out of the collector's sight with `gc.freeze`, and the youngest generation is
collected every YOUNG_THRESHOLD allocations. Cycles are still collected, only less often.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000


def for_bulk_work() -> None:
    """Apply the policy to this process; call once start-up is done (idempotent)."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
