"""The seven agent metrics shared by alert rules and SLA targets (DECISIONS: Metrics).

Interface:

- `METRICS`: metric name -> one-line description (also the body of `GET /alerts/metrics`).
- `compute_metric(db, metric, *, since, until=None, agent=None) -> float | None`
- `compute_metrics(db, metrics, *, since, until=None, agent=None)
  -> {metric: float | None}`: several metrics of one window sharing scans.
- `compute_metric_groups(db, queries) -> {(metric, since, until, agent): value}`:
  any number of (metric, since, until, agent) queries, grouped by window and agent so that each
  (window, agent) pair is scanned once. Rule evaluation and SLA checks use this.

Windows are `since <= event timestamp < until` over normalised timestamps (`until` None = no
upper bound), restricted to the sessions of `agent` when given. Lifecycle events are ignored.
No data gives None, except `session_count`, which is 0. `avg_score:NAME` is
the mean of the scores named NAME whose created_at is in the window (on the agent's sessions). Unknown metric names raise
InvalidInput naming the valid ones. avg_cost reads the costs
stored at ingest (services/pricing.py prices them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.store import Store
from obsctl.vocabulary import METRICS, SCORE_METRIC_PREFIX

# METRICS (name -> description) is declared in obsctl/vocabulary.py, where the models read it.


def check_metric(metric: Any) -> str:
    """Return `metric` if it is one of METRICS or `avg_score:NAME`, else InvalidInput listing
    the valid names (alert rules and SLA targets validate their metric with this)."""
    if type(metric) is str and metric.startswith(SCORE_METRIC_PREFIX):
        from obsctl.services.sessions.housekeeping import check_key

        check_key(metric[len(SCORE_METRIC_PREFIX):], "the score name of avg_score:NAME")
        return metric
    if type(metric) is not str or metric not in METRICS:
        raise InvalidInput(f"metric must be one of {', '.join(METRICS)}, or avg_score:NAME; "
                           f"got {describe_value(metric)}")
    return metric


def compute_metric(store: Store, metric: str, *, since: str, until: str | None = None,
                   agent: str | None = None) -> float | None:
    """One metric over one window; None when the window has no data for it."""
    return compute_metrics(store, [metric], since=since, until=until, agent=agent)[metric]


def compute_metrics(store: Store, metrics: Iterable[str], *, since: str,
                    until: str | None = None, agent: str | None = None) -> dict[str, float | None]:
    """Several metrics over one window, running each underlying query at most once."""
    wanted = [check_metric(m) for m in metrics]
    values: dict[str, float | None] = {}
    aggregates: dict = {}  # read once when a metric needs them
    if any(metric != "session_count" and not metric.startswith(SCORE_METRIC_PREFIX) for metric in wanted):
        aggregates = store.metrics.event_aggregates(since, until, agent)
    for metric in dict.fromkeys(wanted):
        if metric.startswith(SCORE_METRIC_PREFIX):
            values[metric] = store.metrics.score_average(metric[len(SCORE_METRIC_PREFIX):], since, until, agent)
        elif metric == "session_count":
            values[metric] = store.metrics.sessions_started(since, until, agent)
        elif metric == "p95_duration_ms":
            values[metric] = _p95(store, since, until, agent, aggregates["durations"])
        elif metric == "avg_cost":
            values[metric] = _avg_cost(store, since, until, agent, aggregates["sessions"])
        else:
            values[metric] = _from_aggregates(metric, aggregates)
    return values


def compute_metric_groups(
    store: Store,
    queries: Iterable[tuple[str, str, str | None, str | None]],
) -> dict[tuple[str, str, str | None, str | None], float | None]:
    """Answer (metric, since, until, agent) queries, scanning each (window, agent) once."""
    groups: dict[tuple, list[str]] = {}
    for metric, since, until, agent in queries:
        groups.setdefault((since, until, agent), []).append(check_metric(metric))
    results = {}
    for (since, until, agent), metrics in groups.items():
        values = compute_metrics(store, metrics, since=since, until=until, agent=agent)
        for metric, value in values.items():
            results[(metric, since, until, agent)] = value
    return results


def _from_aggregates(metric: str, agg: dict) -> float | None:
    if metric == "avg_duration_ms":
        return agg["duration_sum"] / agg["durations"] if agg["durations"] else None
    if metric == "error_rate":
        return 100.0 * agg["errors"] / agg["events"] if agg["events"] else None
    if metric == "tool_error_rate":
        return 100.0 * agg["tool_errors"] / agg["tool_events"] if agg["tool_events"] else None
    # avg_tokens: total tokens over the sessions that had events in the window.
    return agg["tokens"] / agg["sessions"] if agg["sessions"] else None


def _p95(store, since, until, agent, count: int) -> float | None:
    return duration_percentile(store, since, until, agent, count, 95)


def duration_percentile(store: Store, since: str, until: str | None, agent: str | None, count: int,
                        pct: int) -> float | None:
    """The `pct`th percentile (nearest rank) of the window's `count` event durations."""
    if not count:
        return None
    # Nearest rank: the ceil(pct/100 n)-th smallest value, in integers to avoid float rounding.
    rank = (pct * count + 99) // 100
    value = store.metrics.duration_at_rank(since, until, agent, rank)
    return None if value is None else float(value)


def window_cost(store: Store, since: str, until: str | None, agent: str | None) -> float | None:
    """The USD cost of the window's events, as stored at ingest (None when none is priced)."""
    return store.metrics.window_cost(since, until, agent)


def _avg_cost(store, since, until, agent, sessions: int) -> float | None:
    if not sessions:
        return None
    total = window_cost(store, since, until, agent)
    return None if total is None else total / sessions
