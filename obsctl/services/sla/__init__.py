"""SLA targets: upsert, list, remove, check and history (DECISIONS: SLA).

A target is (agent_name, metric) -> operator (`<=` or `>=`), target_value and window_hours
(default 24, 1-8760). Its metric is computed by the shared metrics engine over the last
`window_hours` for the sessions of that agent. Checking records one snapshot per target;
the history is those snapshots. The summary lives in services/sla/summary.py.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from obsctl.errors import InvalidInput, NotFound
from obsctl.jsonutil import describe_value
from obsctl.models.sla import MAX_AGENT_LEN, OPERATORS, STATUSES, WINDOW_HOURS
from obsctl.params import IntParam
from obsctl.services.metrics import check_metric, compute_metric_groups
from obsctl.services.operators import normalise_operator
from obsctl.store import Store
from obsctl.timeutil import format_ts, now, now_iso

# OPERATORS, WINDOW_HOURS, MAX_AGENT_LEN and STATUSES are declared with the SLA models
# (obsctl/models/sla.py); the CLI reads them here.
HISTORY_HOURS = IntParam("hours", 1, 87600, default=168)
HISTORY_LIMIT = IntParam("limit", 1, 10000, default=1000, capped=True)
_REQUIRED = ("agent_name", "metric", "target_value", "operator")
_WRITABLE = (*_REQUIRED, "window_hours")
_READ_ONLY = ("created_at", "updated_at")


def target_view(row: dict) -> dict:
    """The public form of a stored target."""
    return {
        "agent_name": row["agent_name"],
        "metric": row["metric"],
        "operator": row["operator"],
        "target_value": row["target_value"],
        "window_hours": row["window_hours"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def snapshot_view(row: dict) -> dict:
    """A check result plus its `checked_at` (what the history lists)."""
    return {
        "agent_name": row["agent_name"],
        "metric": row["metric"],
        "operator": row["operator"],
        "target_value": row["target_value"],
        "actual_value": row["actual_value"],
        "status": row["status"],
        "checked_at": row["checked_at"],
    }


def check_agent(value: Any) -> str:
    if type(value) is not str or not value.strip() or len(value) > MAX_AGENT_LEN:
        raise InvalidInput(f"agent_name must be a non-empty string of at most {MAX_AGENT_LEN} "
                           f"characters; got {describe_value(value)}")
    return value


def check_operator(value: Any) -> str:
    """`<=` or `>=` (or a word for one of them), as the symbol; else InvalidInput."""
    return normalise_operator(value, OPERATORS)


def check_target_value(value: Any) -> float:
    """A finite number (a JSON boolean is not one), else InvalidInput."""
    if type(value) not in (int, float) or not math.isfinite(value):
        raise InvalidInput(f"target_value must be a finite number; got {describe_value(value)}")
    return float(value)


def check_target_fields(body: Any) -> dict:
    """The stored values of a target's fields (window_hours only when given); InvalidInput
    naming the first bad or missing one."""
    if type(body) is not dict:
        raise InvalidInput("the SLA target must be a JSON object")
    unknown = [k for k in body if k not in _WRITABLE and k not in _READ_ONLY]
    if unknown:
        raise InvalidInput(f"unknown SLA target field {unknown[0]!r}; fields are {', '.join(_WRITABLE)}")
    missing = [k for k in _REQUIRED if k not in body]
    if missing:
        raise InvalidInput(f"missing required SLA target field{'s' if len(missing) > 1 else ''}: "
                           f"{', '.join(missing)}")
    fields = {"agent_name": check_agent(body["agent_name"]),
              "metric": check_metric(body["metric"]),
              "operator": check_operator(body["operator"]),
              "target_value": check_target_value(body["target_value"])}
    if body.get("window_hours") is not None:
        fields["window_hours"] = WINDOW_HOURS.check(body["window_hours"])
    return fields


def put_target(store: Store, body: Any) -> tuple[dict, bool]:
    """Create or update the target of (agent_name, metric); returns (target, created).

    An update without `window_hours` keeps the target's current window; a new target
    without one gets the default of 24 hours.
    """
    fields = check_target_fields(body)
    stamp = now_iso()
    with store.transaction():
        existing = store.sla.get_target(fields["agent_name"], fields["metric"])
        if existing is None:
            target = {"window_hours": WINDOW_HOURS.default, **fields,
                      "created_at": stamp, "updated_at": stamp}
            store.sla.insert_target(target)
        else:
            target = {**existing, **fields, "updated_at": stamp}
            store.sla.update_target(target)
    return target_view(target), existing is None


def list_targets(store: Store) -> dict:
    """`{"targets": [...], "total": N}` by agent, then metric."""
    targets = [target_view(t) for t in store.sla.list_targets()]
    return {"targets": targets, "total": len(targets)}


def delete_target(store: Store, agent_name: Any, metric: Any) -> dict:
    """Remove the target of (agent_name, metric); its history stays. NotFound if none."""
    if agent_name is None or metric is None:
        raise InvalidInput("give the target to remove as agent_name and metric")
    check_agent(agent_name)
    check_metric(metric)
    with store.transaction():
        if not store.sla.delete_target(agent_name, metric):
            raise NotFound(f"no SLA target for agent {agent_name!r} and metric {metric!r}")
    return {"deleted": True, "agent_name": agent_name, "metric": metric}


def _status(value: float | None, operator: str, target: float) -> str:
    if value is None:
        return "no_data"
    ok = value <= target if operator == "<=" else value >= target
    return "pass" if ok else "fail"


def check_sla(store: Store, settings, *, at: datetime | None = None) -> dict:
    """Check every target now (or `at`) and record one snapshot per target.

    Each target's metric is computed by the metrics engine over `[at - window_hours, at)`
    for its agent; targets sharing an agent and window share one scan. Returns
    `{"checked_at", "results": [...], "passed", "failed", "no_data"}`, results by agent
    then metric.
    """
    at = at or now()
    checked_at = format_ts(at)
    targets = store.sla.list_targets()
    queries = [(t["metric"], format_ts(at - timedelta(hours=t["window_hours"])), checked_at,
                t["agent_name"]) for t in targets]
    values = compute_metric_groups(store, queries)
    results = []
    for target, query in zip(targets, queries):
        value = values[query]
        results.append({
            "agent_name": target["agent_name"],
            "metric": target["metric"],
            "operator": target["operator"],
            "target_value": target["target_value"],
            "actual_value": value,
            "status": _status(value, target["operator"], target["target_value"]),
        })
    if results:
        with store.transaction():
            store.sla.insert_snapshots({**r, "checked_at": checked_at} for r in results)
    counts = {s: sum(1 for r in results if r["status"] == s) for s in STATUSES}
    return {"checked_at": checked_at, "results": results, "passed": counts["pass"],
            "failed": counts["fail"], "no_data": counts["no_data"]}


def sla_history(store: Store, *, agent_name: str | None = None,
                hours: int | None = None, limit: int | None = None,
                at: datetime | None = None) -> dict:
    """`{"snapshots": [...], "total": N}`: snapshots of the last `hours` (168), newest first,
    optionally of one agent; at most `limit` (1000, 1-10000, more counts as 10000), `total`
    counts all."""
    hours = HISTORY_HOURS.resolve(hours)
    if agent_name is not None:
        check_agent(agent_name)
    limit = HISTORY_LIMIT.resolve(limit)
    since = format_ts((at or now()) - timedelta(hours=hours))
    rows, total = store.sla.list_snapshots(since=since, agent_name=agent_name, limit=limit)
    return {"snapshots": [snapshot_view(r) for r in rows], "total": total}
