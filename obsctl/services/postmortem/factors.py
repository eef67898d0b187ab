"""Postmortem reasoning: how errors cascaded, which factors most likely caused them, and
what to do about each.

Cascade rule: errors are taken in time order; an error continues the current cascade when it
comes at most CASCADE_WINDOW_MS after the previous error with at most CASCADE_MAX_SUCCESSES
successful events in between, else it starts a new cascade. Within a cascade each error is
caused by its `parent_id` when that names an earlier error of the cascade, else by the error
before it; the relation says whether it was a retry (same fingerprint), the same tool, or a
different failure that followed.

Likelihood of an error factor (kind of error, and tool when there is one), in 0.1..1:

    0.1 + 0.5 x causal + 0.4 x share
    share  = the factor's errors / all errors
    causal = sum over cascades of (cascade length / all errors) x (1 - p / cascade length),
             p = position (0-based) of the factor's first error in that cascade

so the root of the largest cascade scores highest and late symptoms (the agent giving up)
score lowest. Loops, slow steps and baseline anomalies are factors with fixed likelihoods
(see FIXED_LIKELIHOOD and loop_likelihood); an unacknowledged regression of the agent's
configuration (services/changes.py) that brought the session's model or release is a factor
of likelihood CHANGE_LIKELIHOOD, above the symptoms it explains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from obsctl.services import rates
from obsctl.services.error_kinds import KIND_TITLES
from obsctl.services.triage.facts import SessionAnalysis, Step
from obsctl.services.triage.findings import METRIC_LABELS, metric_value
from obsctl.services.triage.ranking import EXPLAINED_BY
from obsctl.services.triage.suggestions import (
    CHANGE_SUGGESTION,
    LOOP_SUGGESTION,
    METRIC_SUGGESTIONS,
    SLOW_SUGGESTION,
    gave_up,
    suggestion_for,
)
from obsctl.timeutil import ms_between

CASCADE_WINDOW_MS = 300_000.0
CASCADE_MAX_SUCCESSES = 3
FIXED_LIKELIHOOD: dict[tuple[str, str | None], float] = {("anomaly", "critical"): 0.45, ("anomaly", "warning"): 0.35,
                    ("drift", "warning"): 0.25, ("drift", "info"): 0.15}
HIGH_PRIORITY, MEDIUM_PRIORITY = 0.6, 0.3
CHANGE_LIKELIHOOD = 0.8
# A long session's postmortem (services/triage/long.py) lists its CASCADES_SHOWN longest
# cascades, each with its first CASCADE_ERRORS_SHOWN errors; a session read whole lists all.
CASCADES_SHOWN = 100
CASCADE_ERRORS_SHOWN = 100


@dataclass
class Cascade:
    errors: list[Step] = field(default_factory=list)
    causes: list[tuple[str | None, str | None]] = field(default_factory=list)  # (caused_by, relation)
    by_id: dict[str, Step] = field(default_factory=dict)

    def add(self, step: Step, cause: tuple[str | None, str | None]) -> None:
        self.errors.append(step)
        self.causes.append(cause)
        self.by_id.setdefault(step.event_id, step)


def _relation(cause: Step, step: Step) -> str:
    if cause.fingerprint == step.fingerprint:
        return "retry"
    if step.tool_name is not None and cause.tool_name == step.tool_name:
        return "same_tool"
    return "followed"


def find_cascades(a: SessionAnalysis) -> list[Cascade]:
    """Split the session's errors into cascades (see the module docstring)."""
    cascades: list[Cascade] = []
    previous: Step | None = None
    for step, successes in zip(a.errors, a.successes_before):
        gap = ms_between(previous.timestamp, step.timestamp) if previous else None
        if previous is None or successes > CASCADE_MAX_SUCCESSES or gap is None or gap > CASCADE_WINDOW_MS:
            cascades.append(Cascade())
            cascades[-1].add(step, (None, None))
        else:
            current = cascades[-1]
            cause = current.by_id.get(step.parent_id) if step.parent_id else None
            relation = "parent" if cause is not None else None
            cause = cause or previous
            current.add(step, (cause.event_id, relation or _relation(cause, step)))
        previous = step
    return cascades


def cascade_path(cascade: Cascade) -> str:
    """`rate_limit x3 -> timeout (web_search) -> other`: consecutive equal links collapsed."""
    parts: list[list] = []
    for step in cascade.errors:
        label = f"{step.kind} ({step.tool_name})" if step.tool_name else step.kind
        if parts and parts[-1][0] == label:
            parts[-1][1] += 1
        else:
            parts.append([label, 1])
    return " -> ".join(label if n == 1 else f"{label} x{n}" for label, n in parts)


def cascade_views(a: SessionAnalysis, cascades: list[Cascade]) -> dict:
    """The postmortem's `error_cascade` section (bounded for a long session: see
    CASCADES_SHOWN)."""
    views = []
    numbered = list(enumerate(cascades, start=1))
    shown = numbered
    if a.long and len(numbered) > CASCADES_SHOWN:
        longest = sorted(numbered, key=lambda nc: (-len(nc[1].errors), nc[0]))[:CASCADES_SHOWN]
        shown = sorted(longest, key=lambda nc: nc[0])
    errors_shown = CASCADE_ERRORS_SHOWN if a.long else len(a.errors)
    for number, cascade in shown:
        first, last = cascade.errors[0], cascade.errors[-1]
        later_success = a.last_success is not None and a.last_success > last.order
        views.append({
            "cascade": number,
            "length": len(cascade.errors),
            "path": cascade_path(cascade),
            "root_cause": {"event_id": first.event_id, "event_type": first.event_type,
                           "tool_name": first.tool_name, "kind": first.kind, "message": first.message},
            "started_at": first.timestamp,
            "ended_at": last.timestamp,
            "span_ms": round(ms_between(first.timestamp, last.timestamp) or 0.0, 3),
            "recovered": later_success,
            "errors": [
                {"event_id": s.event_id, "timestamp": s.timestamp, "elapsed_ms": a.elapsed_ms(s),
                 "event_type": s.event_type, "tool_name": s.tool_name, "kind": s.kind,
                 "message": s.message, "caused_by": caused_by, "relation": relation}
                for s, (caused_by, relation) in zip(cascade.errors[:errors_shown], cascade.causes)
            ],
        })
    return {"total_errors": a.error_events, "cascades": views,
            "longest": max((len(c.errors) for c in cascades), default=0),
            "propagated": any(len(c.errors) > 1 for c in cascades),
            "cascades_left_out": len(cascades) - len(views)}


def _error_factors(a: SessionAnalysis, cascades: list[Cascade]) -> list[dict]:
    total = len(a.errors)
    stats: dict[tuple, dict] = {}
    for step in a.errors:
        entry = stats.setdefault((step.kind, step.tool_name), {"count": 0, "first": step, "causal": 0.0})
        entry["count"] += 1
    for number, cascade in enumerate(cascades, start=1):
        length = len(cascade.errors)
        seen: set[tuple] = set()
        for position, step in enumerate(cascade.errors):
            key = (step.kind, step.tool_name)
            if key in seen:
                continue
            seen.add(key)
            stats[key]["causal"] += (length / total) * (1 - position / length)
            if position == 0 and length > 1:
                stats[key].setdefault("roots", []).append(f"#{number} ({cascade_path(cascade)})")
    factors = []
    for (kind, tool), entry in stats.items():
        share = entry["count"] / total
        likelihood = round(min(1.0, 0.1 + 0.5 * entry["causal"] + 0.4 * share), 2)
        first = entry["first"]
        title = KIND_TITLES[kind] + (f" in tool {tool}" if tool else "")
        evidence = [f"{rates.of(entry['count'], total, 'errors')} were {kind}",
                    f"first at {first.timestamp}: {first.message or first.event_type}"]
        if entry.get("roots"):
            evidence.append("started cascade " + ", ".join(entry["roots"]))
        if tool and tool in a.tools:
            t = a.tools[tool]
            evidence.append(f"tool {tool} failed {t.failures} of {t.calls} call(s)")
        action = suggestion_for(a, kind)
        factors.append({"factor": f"{kind}:{tool}" if tool else kind, "category": "errors",
                        "title": title, "likelihood": likelihood, "evidence": evidence,
                        "action": f"For tool {tool}: {action}" if tool else action})
    return factors


def loop_likelihood(count: int) -> float:
    return round(min(0.9, 0.5 + 0.05 * (count - 5)), 2)


def _change_factor(a: SessionAnalysis) -> list[dict]:
    change = a.baseline.change
    if change is None or change["status"] != "regression" or change["acknowledged"]:
        return []
    to = change["to"]
    return [{
        "factor": f"change:{to['model'] or to['release']}", "category": "change",
        "title": f"Configuration changed at {change['changed_at']}: {change['title']}",
        "likelihood": CHANGE_LIKELIHOOD,
        "evidence": [f"{change['before']['sessions']} sessions before the change against "
                     f"{change['after']['sessions']} after it, from session {change['first_session_id']}",
                     "not acknowledged: the sessions before it stay the agent's baseline"],
        "action": CHANGE_SUGGESTION.format(id=change["change_id"])}]


def _other_factors(a: SessionAnalysis) -> list[dict]:
    factors = _change_factor(a)
    ended = gave_up(a)
    for loop in a.loops:
        # The agent gave up after the loop (its only errors say so): the loop is the cause.
        caused = ended and loop.last.order < a.errors[-1].order
        title = f"Loop: {loop.tool_name} repeated {loop.count} times with the same input"
        evidence = [(f"{loop.count} identical calls from {loop.first.timestamp} to "
                     f"{loop.last.timestamp}"), f"input: {(loop.tool_input or 'none')[:120]}"]
        if loop.identical_outputs:
            title += " and identical outputs"
            evidence.append(f"all {loop.count} calls returned the same output")
        if caused:
            title += ", then the agent gave up"
            evidence.append(f"then: {a.errors[-1].message}")
        factors.append({
            "factor": f"loop:{loop.tool_name}", "category": "loop", "title": title,
            "likelihood": 1.0 if caused else loop_likelihood(loop.count),
            "evidence": evidence, "action": LOOP_SUGGESTION})
    for kind in a.slow:
        label = f"{kind.event_type}:{kind.tool_name}" if kind.tool_name else kind.event_type
        factors.append({
            "factor": f"latency:{label}", "category": "latency",
            "title": f"Slow {kind.tool_name or kind.event_type} steps",
            "likelihood": round(min(0.5, 0.2 + 0.05 * kind.count), 2),
            "evidence": [(f"{kind.count} event(s) above {round(kind.threshold_ms)} ms "
                          f"(reference: {kind.source} median {round(kind.median_ms)} ms)")],
            "action": SLOW_SUGGESTION})
    for check in a.baseline.checks:
        likelihood = FIXED_LIKELIHOOD.get((check.status, check.severity))
        if likelihood is None or check.value is None or check.median is None:
            continue
        label = METRIC_LABELS[check.name]
        factors.append({
            "factor": f"{check.status}:{check.name}", "category": check.status,
            "title": f"{label} {'far above' if check.status == 'anomaly' else 'above'} the agent's baseline",
            "likelihood": likelihood,
            "evidence": [(f"{metric_value(check.name, check.value)} against a baseline median of "
                          f"{metric_value(check.name, check.median)} over "
                          f"{a.baseline.sessions} sessions (robust z {check.z:.1f})")],
            "action": METRIC_SUGGESTIONS[check.name]})
    return factors


def contributing_factors(a: SessionAnalysis, cascades: list[Cascade]) -> list[dict]:
    """Factors ranked by likelihood (descending, then by name); each keeps its `action`."""
    factors = (_error_factors(a, cascades) if a.errors else []) + _other_factors(a)
    return sorted(_fold(factors), key=lambda f: (-f["likelihood"], f["factor"]))


def _fold(factors: list[dict]) -> list[dict]:
    """An anomaly or drift another factor explains (triage's EXPLAINED_BY: more errors than
    usual by the errors, a longer run by slow steps or a loop, ...) is evidence of that factor,
    not a factor of its own."""
    kept = []
    for factor in factors:
        metric = factor["factor"].partition(":")[2] if factor["category"] in ("anomaly", "drift") else None
        host = None
        for category in EXPLAINED_BY.get(metric or "", ()):
            host = host or max((f for f in factors if f["category"] == category),
                               key=lambda f: f["likelihood"], default=None)
        if host is None:
            kept.append(factor)
        else:
            host["evidence"].append(f"{factor['title'].lower()}: {factor['evidence'][0]}")
    return kept


def recommendations(factors: list[dict]) -> list[dict]:
    """One recommendation per factor, in factor order, without repeating an action."""
    seen: set[str] = set()
    recs = []
    for factor in factors:
        if factor["action"] in seen:
            continue
        seen.add(factor["action"])
        likelihood = factor["likelihood"]
        priority = ("high" if likelihood >= HIGH_PRIORITY
                    else "medium" if likelihood >= MEDIUM_PRIORITY else "low")
        recs.append({"factor": factor["factor"], "priority": priority, "action": factor["action"]})
    return recs
