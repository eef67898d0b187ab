"""Finding rules: each turns one fact of a SessionAnalysis into a finding with a severity,
a title, a detail, a suggestion and its evidence. Thresholds are documented in docs/triage.md."""

from __future__ import annotations

from typing import Any

from obsctl.services.triage.anomaly import WINDOW_DAYS
from obsctl.services.triage.facts import SessionAnalysis
from obsctl.services.triage.suggestions import (
    CHANGE_SUGGESTION,
    LOOP_SUGGESTION,
    METRIC_SUGGESTIONS,
    SLOW_SUGGESTION,
    gave_up,
    suggestion_for,
)
from obsctl.text import plural

SEVERITY_RANK = {"info": 1, "warning": 2, "critical": 3}
CATEGORIES = ("change", "errors", "tools", "loop", "latency", "anomaly", "drift", "cost")

# The error thresholds, shared with the postmortem severity (services/postmortem.py): the
# error event rate (percent, as reported) and the number of error events.
ERROR_RATE_CRITICAL = 25.0
ERROR_RATE_WARNING = 5.0
ERRORS_WARNING = 3
REPEATED_ERROR = 3
REPEATED_ERROR_CRITICAL = 10
TOOL_CRITICAL_RATE = 0.5
TOOL_CRITICAL_FAILURES = 3
TOOL_WARNING_RATE = 0.1
LOOP_CRITICAL = 10
SLOW_WARNING = 3
WASTE_SHARE_PCT = 20.0
WASTE_MIN_TOKENS = 1000
# What a session cost: a finding (critical from HIGH, warning from NOTABLE dollars) and points
# off the score, which also takes COST_HIGH_RATIO times the agent's median session cost (the
# baseline's cost anomaly finding already says how far above the median it is).
COST_HIGH_USD, COST_NOTABLE_USD = 5.0, 1.0
COST_HIGH_RATIO = 100.0

METRIC_LABELS = {"total_tokens": "Token usage", "duration_ms": "Duration",
                 "event_count": "Event count", "error_count": "Error count", "cost_usd": "Cost"}



def _finding(category: str, severity: str, title: str, detail: str, suggestion: str,
             evidence: dict) -> dict:
    return {"category": category, "severity": severity, "title": title, "detail": detail,
            "suggestion": suggestion, "evidence": evidence}


def _pct(share: float) -> float:
    return round(100.0 * share, 2)


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.4f}" if abs(value) < 1 else f"{value:,.1f}"


def metric_value(name: str, value: float) -> str:
    """A baseline metric for people: `$0.22`, `13.1 s`, `4,210 tokens`, `12 events`."""
    if name == "cost_usd":
        if value >= 1 or value == 0:
            return f"${value:,.2f}"
        text = f"{value:.4f}"
        while text.endswith("0") and len(text.split(".")[1]) > 2:
            text = text[:-1]
        return f"${text}"
    if name == "duration_ms":
        return f"{value:,.0f} ms" if value < 1000 else f"{value / 1000:,.1f} s"
    unit = {"total_tokens": "tokens", "event_count": "events", "error_count": "errors"}[name]
    return f"{value:,.0f} {unit}" if float(value).is_integer() else f"{value:,.1f} {unit}"


def _step_ref(a: SessionAnalysis, step) -> dict:
    return {"event_id": step.event_id, "timestamp": step.timestamp, "elapsed_ms": a.elapsed_ms(step),
            "event_type": step.event_type, "tool_name": step.tool_name, "message": step.message}


def error_severity(failed: bool, error_events: int, error_event_rate: float) -> tuple[str, str]:
    """(severity, why) of a session's errors: critical when the session failed or 25%+ of
    its events failed, warning at 5%+ or 3+ errors, else info."""
    rate = f"{error_event_rate:g}%"
    if failed:
        return "critical", "critical because the session ended in failure"
    if error_event_rate >= ERROR_RATE_CRITICAL:
        return "critical", f"critical because {rate} of its events failed, at least {ERROR_RATE_CRITICAL:g}%"
    if error_event_rate >= ERROR_RATE_WARNING:
        return "warning", f"warning because {rate} of its events failed, at least {ERROR_RATE_WARNING:g}%"
    if error_events >= ERRORS_WARNING:
        return "warning", f"warning because {error_events} events failed, at least {ERRORS_WARNING}"
    return "info", (f"info: under {ERROR_RATE_WARNING:g}% of the events failed and under "
                    f"{ERRORS_WARNING} errors")


def error_findings(a: SessionAnalysis) -> list[dict]:
    """One summary finding for the session's errors, plus one per repeated error group."""
    if not a.errors:
        return []
    counts = a.counts
    severity, why = error_severity(a.failed, counts.error_events, counts.error_event_rate)
    kinds: dict[str, int] = {}
    for step in a.errors:
        kinds[step.kind] = kinds.get(step.kind, 0) + 1
    dominant = max(kinds, key=lambda k: kinds[k])  # first seen wins a tie (dicts keep order)
    last = a.errors[-1]
    title = counts.describe()
    if a.failed:
        title += "; the session ended in failure"
    detail = ("Errors by kind: " + ", ".join(f"{k} x{n}" for k, n in kinds.items())
              + f". Last error ({last.event_type}) at {last.timestamp}: {last.message or '-'}")
    if a.failed:
        detail += (". The session's status is error" if a.session["status"] == "error"
                   else ". The session's last event failed")
    detail += f". Severity {why}."
    findings = [_finding("errors", severity, title, detail, suggestion_for(a, dominant), {
        **counts.view(), "failed": a.failed, "status": a.session["status"], "kinds": kinds,
        "first_error": _step_ref(a, a.errors[0]), "last_error": _step_ref(a, last),
    })]
    for group in a.groups:
        if group.count < REPEATED_ERROR:
            continue
        where = f" from tool {group.tool_name}" if group.tool_name else ""
        findings.append(_finding(
            "errors", "critical" if group.count >= REPEATED_ERROR_CRITICAL else "warning",
            f"Repeated error x{group.count}: {group.example[:100]}",
            f"{group.count} {group.event_type} events{where} share the message pattern "
            f"'{group.pattern or group.event_type}' ({group.first_seen} to {group.last_seen}).",
            suggestion_for(a, group.kind), group.view()))
    return findings


def tool_findings(a: SessionAnalysis) -> list[dict]:
    """One finding per tool that failed at least once."""
    findings = []
    by_fingerprint = {g.fingerprint: g for g in a.groups}
    for stats in a.tools.values():
        if not stats.failures:
            continue
        rate = stats.failure_rate
        if stats.failures >= TOOL_CRITICAL_FAILURES and rate >= TOOL_CRITICAL_RATE:
            severity = "critical"
        elif rate >= TOOL_WARNING_RATE:
            severity = "warning"
        else:
            severity = "info"
        modes: list[dict[str, Any]] = [{"fingerprint": fp, "count": n, "kind": by_fingerprint[fp].kind,
                  "example": by_fingerprint[fp].example}
                 for fp, n in sorted(stats.failure_modes.items(), key=lambda kv: -kv[1])]
        detail = "Failure modes: " + "; ".join(f"{m['kind']} x{m['count']} ({m['example'][:80]})"
                                                for m in modes)
        findings.append(_finding(
            "tools", severity,
            f"Tool {stats.tool_name} failed {stats.failures} of {stats.calls} call(s) ({_pct(rate)}%)",
            detail + ".", suggestion_for(a, modes[0]["kind"]), {
                "tool_name": stats.tool_name, "calls": stats.calls, "failures": stats.failures,
                "failure_rate_pct": _pct(rate), "slow_calls": stats.slow_calls,
                "p50_ms": stats.p50_ms, "p95_ms": stats.p95_ms, "failure_modes": modes,
            }))
    return findings


def loop_findings(a: SessionAnalysis) -> list[dict]:
    """One finding per run of 5+ identical tool calls in a row. A loop that the agent ended by
    giving up (its only errors say so) caused the failure: critical, and ranked first."""
    findings = []
    ended = gave_up(a)
    for loop in a.loops:
        first, last = loop.first, loop.last
        failures = loop.failures
        tool_ms = round(loop.tool_ms, 3)
        same = loop.identical_outputs
        caused = ended and last.order < a.errors[-1].order
        title = f"Loop: {loop.tool_name} called {loop.count} times in a row with the same input"
        if same:
            title += " and identical outputs"
        if caused:
            title += f", then the agent gave up ({(a.errors[-1].message or '')[:60]})"
        findings.append(_finding(
            "loop", "critical" if loop.count >= LOOP_CRITICAL or caused else "warning", title,
            f"From {first.timestamp} to {last.timestamp}, {_num(tool_ms)} ms of tool time, "
            f"{failures} of the calls failed"
            + (f"; all {loop.count} outputs were identical, so repeating the call could not help" if same else "")
            + f". Input: {(loop.tool_input or 'none')[:120]}",
            LOOP_SUGGESTION, {
                "tool_name": loop.tool_name, "count": loop.count, "input": loop.tool_input,
                "failures": failures, "tool_ms": tool_ms, "first_event_id": first.event_id,
                "last_event_id": last.event_id, "first_seen": first.timestamp,
                "last_seen": last.timestamp, "identical_outputs": same, "caused_failure": caused,
            }))
    return findings


def latency_findings(a: SessionAnalysis) -> list[dict]:
    """One finding per kind of event (type and tool) with slow successful events."""
    findings = []
    for kind in a.slow:
        label = f"{kind.event_type} {kind.tool_name}" if kind.tool_name else kind.event_type
        slowest = kind.max_ms
        if kind.source == "baseline":
            reference = (f"the agent's baseline median {_num(kind.median_ms)} ms and p95 "
                         f"{_num(kind.p95_ms)} ms")
        else:
            reference = f"the median {_num(kind.median_ms)} ms of the same events in this session"
        findings.append(_finding(
            "latency", "warning" if kind.count >= SLOW_WARNING else "info",
            f"{kind.count} slow {label} event(s), slowest {_num(slowest)} ms",
            f"Above the threshold of {_num(kind.threshold_ms)} ms set from {reference}.",
            SLOW_SUGGESTION, {
                "event_type": kind.event_type, "tool_name": kind.tool_name,
                "slow_events": kind.count, "threshold_ms": round(kind.threshold_ms, 3),
                "reference": kind.source, "median_ms": kind.median_ms, "p95_ms": kind.p95_ms,
                "max_ms": slowest, "event_ids": kind.event_ids,
            }))
    return findings


def baseline_findings(a: SessionAnalysis) -> list[dict]:
    """Anomaly and drift findings, one per metric above the agent's baseline."""
    findings = []
    for check in a.baseline.checks:
        # An anomaly or a drift always has a value, a median and a severity.
        if (check.status not in ("anomaly", "drift") or check.value is None or check.median is None
                or check.severity is None):
            continue
        label = METRIC_LABELS[check.name]
        evidence = {"metric": check.name, "baseline_sessions": a.baseline.sessions, **check.view()}
        value, centre = metric_value(check.name, check.value), metric_value(check.name, check.median)
        if check.status == "anomaly":
            ratio = f"{check.value / check.median:,.1f}x" if check.median else "far above"
            title = f"{label} {value} is {ratio} the baseline median {centre}"
            detail = (f"Robust z-score {check.z:.1f} against {a.baseline.sessions} sessions of agent "
                      f"{a.session['agent_name']} in the previous {WINDOW_DAYS} days.")
        else:
            title = f"{label} {check.change_pct:+.0f}% above the baseline median {centre}"
            detail = (f"{value} against a median of {centre} over "
                      f"{a.baseline.sessions} recent sessions of agent {a.session['agent_name']} "
                      f"(robust z-score {check.z:.1f}, not an outlier).")
        if check.name == "cost_usd" and check.value:
            maker = cost_maker(a, check.value)
            detail += f" Most of it: {maker}." if maker else ""
        findings.append(_finding(check.status, check.severity, title, detail,
                                 METRIC_SUGGESTIONS[check.name], evidence))
    return findings


def cost_level(a: SessionAnalysis) -> tuple[float | None, float | None, str | None]:
    """(the session's cost, its ratio to the agent's median session cost, and the level it
    reaches: high, notable or None)."""
    total = a.cost["total_usd"]
    if total is None:
        return None, None, None
    check = a.baseline.check("cost_usd") if a.baseline.sufficient else None
    ratio = total / check.median if check and check.median else None
    if total >= COST_HIGH_USD:
        return total, ratio, "high"
    if total >= COST_NOTABLE_USD:
        return total, ratio, "notable"
    return total, ratio, None


def cost_maker(a: SessionAnalysis, total: float) -> str:
    """`claude-3-opus: $7.20, 99.9% of the cost, on an agent that usually runs claude-3-5-sonnet`."""
    priced = [m for m in a.cost["by_model"] if m["cost_usd"]]
    if not priced or total <= 0:
        return ""
    top = max(priced, key=lambda m: m["cost_usd"])
    text = f"{top['model']}: ${top['cost_usd']:,.2f}, {100 * top['cost_usd'] / total:.1f}% of the cost"
    usual = a.baseline.usual_model
    if usual and usual != top["model"]:
        text += f", on an agent that usually runs {usual}"
    return text


def cost_findings(a: SessionAnalysis) -> list[dict]:
    """What the session cost, unpriced models, and tokens spent on failed steps."""
    findings = []
    total, ratio, level = cost_level(a)
    if level is not None and total is not None:
        against = f", {ratio:,.0f}x the agent's median session (${total / ratio:,.4f})" if ratio else ""
        maker = cost_maker(a, total)
        findings.append(_finding(
            "cost", "critical" if level == "high" else "warning",
            f"Cost ${total:,.2f}{against}",
            (f"{maker}." if maker else f"The session cost ${total:,.2f}.")
            + f" Thresholds: ${COST_NOTABLE_USD:g} (warning), ${COST_HIGH_USD:g} (critical).",
            METRIC_SUGGESTIONS["cost_usd"],
            {"cost_usd": round(total, 6), "median_cost_usd": round(total / ratio, 6) if ratio else None,
             "ratio": round(ratio, 2) if ratio else None, "top_model": maker.split(":")[0] or None,
             "usual_model": a.baseline.usual_model}))
    cost = a.cost
    if cost["unpriced_tokens"] or cost["unpriced_models"]:
        models = cost["unpriced_models"]
        title = (f"No price for model(s): {', '.join(models)}" if models
                 else f"{cost['unpriced_tokens']:,} tokens on events without a model")
        findings.append(_finding(
            "cost", "info", title,
            f"{cost['unpriced_tokens']:,} tokens could not be priced; cost totals cover the priced "
            f"models only.",
            "Add the missing models to the OBSCTL_PRICES file "
            '({"model": {"input_per_mtok": x, "output_per_mtok": y}}).',
            {"unpriced_models": models, "unpriced_tokens": cost["unpriced_tokens"]}))
    failed = cost["failed_steps"]
    if failed["token_share_pct"] >= WASTE_SHARE_PCT and failed["total_tokens"] >= WASTE_MIN_TOKENS:
        findings.append(_finding(
            "cost", "warning",
            f"{failed['token_share_pct']}% of tokens ({failed['total_tokens']:,}) were spent on failed steps",
            f"{plural(failed['events'], 'failed event')} used {plural(failed['total_tokens'], 'token', sep=True)}"
            + (f" costing ${failed['cost_usd']:.4f}." if failed["cost_usd"] is not None else "."),
            "Fail fast: validate inputs before expensive calls and stop retrying calls that keep "
            "failing.", failed))
    return findings


CHANGE_CRITICAL_RATIO = 5.0
def change_findings(a: SessionAnalysis) -> list[dict]:
    """The unacknowledged regression that brought the session's configuration (model,
    release): the cause of the latency, cost and error findings measured against the sessions
    before it. Critical when a metric got 5x worse (or the error rate 25 points), else warning."""
    change = a.baseline.change
    if change is None or change["status"] != "regression" or change["acknowledged"]:
        return []
    before, after = change["before"], change["after"]
    worst = 0.0
    for metric, verdict in change["metrics"].items():
        if verdict != "regression":
            continue
        if metric == "error_event_rate":
            worst = max(worst, CHANGE_CRITICAL_RATIO if after[metric] - before[metric] >= 25 else 1.0)
        elif before[metric]:
            worst = max(worst, after[metric] / before[metric])
        else:
            worst = max(worst, CHANGE_CRITICAL_RATIO)
    regressed = [m for m, v in change["metrics"].items() if v == "regression"]
    return [_finding(
        "change", "critical" if worst >= CHANGE_CRITICAL_RATIO else "warning",
        f"Changed at {change['changed_at']}: {change['title']}",
        (f"From session {change['first_session_id']} on, agent {change['agent_name']} runs "
         f"{_config(change['to'])} instead of {_config(change['from'])}. Compared with "
         f"{plural(before['sessions'], 'session')} before the change, "
         f"{plural(after['sessions'], 'session')} after it regressed on "
         f"{', '.join(REGRESSED_LABELS[m] for m in regressed)}"
         + (" (provisional: fewer than 3 sessions after it)" if change["provisional"] else "")
         + ". Until the change is acknowledged, this session is judged against the sessions before it."),
        CHANGE_SUGGESTION.format(id=change["change_id"]),
        {"change_id": change["change_id"], "changed_at": change["changed_at"], "from": change["from"],
         "to": change["to"], "metrics": change["metrics"], "before": before, "after": after,
         "provisional": change["provisional"]})]


REGRESSED_LABELS = {"llm_p50_ms": "LLM latency", "cost_per_session_usd": "cost per session",
                    "error_event_rate": "error rate"}


def _config(config: dict) -> str:
    parts = [config["model"] or "", f"release {config['release']}" if config["release"] else ""]
    return " ".join(p for p in parts if p) or "an unknown configuration"


RULES = (change_findings, error_findings, tool_findings, loop_findings, latency_findings,
         baseline_findings, cost_findings)
