"""`GET /sla/summary`: compliance across all agents from each target's latest check.

- `overall_pass_rate`: percent of the current targets whose latest result is `pass`, out of
  those that passed or failed (`no_data` and never-checked targets are left out); null when
  none did. Two decimals.
- `agents`: the same per agent (by name), with its counts.
- `worst_offenders`: failing targets, furthest miss first. The miss is relative to the
  target: |actual - target| / |target|. A zero target has no relative scale, so any miss
  of one comes first (its `miss_percent` is null); ties go to the larger absolute miss.
- `at_risk`: passing targets whose actual value is within 10% of the target value
  (|actual - target| <= 0.1 |target|), closest to breaching first.

Each entry is the latest snapshot (the result as it was checked, with `checked_at`).
"""

from __future__ import annotations

from obsctl.models.sla import SlaAgentSummary, SlaAtRisk, SlaOffender, SlaSummary
from obsctl.services.sla import snapshot_view
from obsctl.store import Store

AT_RISK_FRACTION = 0.10


def _pass_rate(passed: int, failed: int) -> float | None:
    decided = passed + failed
    return round(100.0 * passed / decided, 2) if decided else None


def _relative(snapshot: dict) -> float | None:
    """|actual - target| / |target|; None for a zero target."""
    target = snapshot["target_value"]
    if target == 0:
        return None
    return abs(snapshot["actual_value"] - target) / abs(target)


def _percent(ratio: float | None) -> float | None:
    return None if ratio is None else round(100.0 * ratio, 2)


def _offender_key(snapshot: dict):
    ratio = _relative(snapshot)
    miss = abs(snapshot["actual_value"] - snapshot["target_value"])
    # A zero target's miss is unbounded relative to it: sort those first.
    return (ratio is not None, -(ratio or 0.0), -miss, snapshot["agent_name"], snapshot["metric"])


def _at_risk(snapshot: dict) -> bool:
    margin = abs(snapshot["actual_value"] - snapshot["target_value"])
    return margin <= AT_RISK_FRACTION * abs(snapshot["target_value"])


def sla_summary(store: Store) -> SlaSummary:
    """Pass rates overall and per agent, worst offenders and targets at risk (see module doc)."""
    latest = store.sla.latest_snapshots()
    counts = {"pass": 0, "fail": 0, "no_data": 0, "unchecked": 0}
    agents: dict[str, dict] = {}
    failing, passing = [], []
    last_checked = None
    for agent_name, _metric, snapshot in latest:
        status = snapshot["status"] if snapshot else "unchecked"
        counts[status] += 1
        agent = agents.setdefault(agent_name, {"agent_name": agent_name, "targets": 0, "passed": 0,
                                               "failed": 0, "no_data": 0, "unchecked": 0})
        agent["targets"] += 1
        agent[{"pass": "passed", "fail": "failed"}.get(status, status)] += 1
        if snapshot is None:
            continue
        last_checked = max(last_checked or "", snapshot["checked_at"])
        if status == "fail":
            failing.append(snapshot)
        elif status == "pass":
            passing.append(snapshot)

    offenders = [SlaOffender(**snapshot_view(s), miss_percent=_percent(_relative(s)))
                 for s in sorted(failing, key=_offender_key)]
    risky = sorted((s for s in passing if _at_risk(s)),
                   key=lambda s: (_relative(s) or 0.0, s["agent_name"], s["metric"]))
    at_risk = [SlaAtRisk(**snapshot_view(s), margin_percent=_percent(_relative(s))) for s in risky]
    return SlaSummary(
        overall_pass_rate=_pass_rate(counts["pass"], counts["fail"]), targets=len(latest),
        passed=counts["pass"], failed=counts["fail"], no_data=counts["no_data"], unchecked=counts["unchecked"],
        last_checked_at=last_checked,
        agents=[SlaAgentSummary(**a, pass_rate=_pass_rate(a["passed"], a["failed"])) for a in agents.values()],
        worst_offenders=offenders, at_risk=at_risk)
