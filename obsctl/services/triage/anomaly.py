"""Robust statistics against the agent's baseline: anomalies, drift and latency references.

Baseline: the same agent's other sessions that started in the 7 days before this session
started (the most recent BASELINE_CAP of them), narrowed to the session's configuration
(model, release) or to the sessions before an unacknowledged regression (see
`build_baseline`); at least MIN_BASELINE_SESSIONS are needed, else anomaly and drift checks
are skipped and the report says so. Anchoring the window on
the session's own start keeps a report the same whenever it is run.

Per metric (total_tokens, duration_ms, event_count, error_count, cost_usd) the baseline gives
a median and a robust scale (1.4826 x MAD, falling back to 1.2533 x mean absolute deviation,
never below 5% of the median or one unit). Only values above the baseline count: a session
that is cheaper or shorter than usual is not a problem to triage.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from obsctl.services.pricing import priced_total
from obsctl.services.sessions.fields import session_duration_ms
from obsctl.timeutil import format_ts, parse_ts

WINDOW_DAYS = 7
MIN_BASELINE_SESSIONS = 3
BASELINE_CAP = 200
LATENCY_SESSIONS = 50
Z_ANOMALY = 3.5
ANOMALY_RATIO = 1.5
CRITICAL_RATIO = 5.0
DRIFT_PCT = 50.0
DRIFT_WARNING_PCT = 100.0

METRICS = ("total_tokens", "duration_ms", "event_count", "error_count", "cost_usd")
# The smallest excess over the median worth a finding, and the smallest robust scale.
MIN_EXCESS = {"total_tokens": 1000, "duration_ms": 5000, "event_count": 10, "error_count": 3,
              "cost_usd": 0.01}
UNIT = {"total_tokens": 1, "duration_ms": 1, "event_count": 1, "error_count": 1, "cost_usd": 1e-6}

# Latency: a successful event is slow when it exceeds its kind's threshold.
LATENCY_MIN_SAMPLES = 20
SESSION_MIN_SAMPLES = 5
SLOW_FLOOR_MS = 1000.0


def median(values: list[float]) -> float:
    """The median of a non-empty list (mean of the two middle values for an even count)."""
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def nearest_rank(ordered: list[float], pct: int) -> float:
    """The pct-th percentile of a sorted non-empty list by nearest rank (ceil(pct/100 n))."""
    return float(ordered[max(1, (pct * len(ordered) + 99) // 100) - 1])


def robust_scale(values: list[float], centre: float, unit: float) -> float:
    """1.4826 x MAD; when the MAD is 0, 1.2533 x the mean absolute deviation; never below 5%
    of |centre| nor `unit`."""
    deviations = [abs(v - centre) for v in values]
    # The mean absolute deviation is only a fallback: it is not robust to outliers.
    spread = 1.4826 * median(deviations) or 1.2533 * sum(deviations) / len(deviations)
    return max(spread, 0.05 * abs(centre), unit)


@dataclass
class MetricCheck:
    """One metric of the session against the baseline."""

    name: str
    value: float | None
    median: float | None = None
    scale: float | None = None
    z: float | None = None
    change_pct: float | None = None
    status: str = "no_data"  # normal, anomaly, drift or no_data
    severity: str | None = None  # info, warning or critical for anomaly and drift

    def view(self) -> dict:
        return {"value": _round(self.value), "median": _round(self.median),
                "scale": _round(self.scale), "robust_z": _round(self.z, 2),
                "change_pct": _round(self.change_pct, 1), "status": self.status,
                "severity": self.severity}


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def check_metric(name: str, value: float | None, samples: list[float]) -> MetricCheck:
    """Compare one value with the baseline samples (non-decreasing in the value: a larger
    value never gets a milder status)."""
    check = MetricCheck(name, value)
    if value is None or len(samples) < MIN_BASELINE_SESSIONS:
        return check
    centre = median(samples)
    scale = robust_scale(samples, centre, UNIT[name])
    excess = value - centre
    check.median, check.scale, check.z = centre, scale, excess / scale
    check.change_pct = 100.0 * excess / centre if centre > 0 else None
    check.status = "normal"
    floor = MIN_EXCESS[name]
    if check.z >= Z_ANOMALY and value >= ANOMALY_RATIO * centre and excess >= floor:
        check.status = "anomaly"
        critical = value >= max(CRITICAL_RATIO * centre, centre + CRITICAL_RATIO * floor)
        check.severity = "critical" if critical else "warning"
    elif check.change_pct is not None and check.change_pct >= DRIFT_PCT and excess >= floor:
        check.status = "drift"
        check.severity = "warning" if check.change_pct >= DRIFT_WARNING_PCT else "info"
    return check


def session_metric_values(session: dict, cost_usd: float | None) -> dict[str, float | None]:
    """The five baseline metrics of one session row (own session or baseline session)."""
    return {
        "total_tokens": session["total_tokens_in"] + session["total_tokens_out"],
        "duration_ms": session_duration_ms(session),
        "event_count": session["event_count"],
        "error_count": session["error_count"],
        "cost_usd": cost_usd,
    }


@dataclass
class Baseline:
    """The baseline of one session: its window, sessions and per-metric checks."""

    since: str
    until: str
    sessions: int
    checks: list[MetricCheck]
    latency: dict  # {(event_type, tool_name): sorted durations}
    usual_model: str | None = None  # the model with the most tokens in the agent's sessions of the window
    basis: str = "agent"  # which of the agent's sessions: agent, configuration or before_change
    change: dict | None = None  # the change (services/changes.py) that brought the session's configuration

    def check(self, name: str) -> MetricCheck | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def sufficient(self) -> bool:
        return self.sessions >= MIN_BASELINE_SESSIONS

    def view(self) -> dict:
        note = None
        if not self.sufficient:
            note = (f"{self.sessions} baseline session(s) of this agent in the previous {WINDOW_DAYS} "
                    f"days; {MIN_BASELINE_SESSIONS} are needed, so anomaly and drift checks were "
                    f"skipped and latency was judged within the session")
        return {
            "window_days": WINDOW_DAYS,
            "since": self.since,
            "until": self.until,
            "sessions": self.sessions,
            "required": MIN_BASELINE_SESSIONS,
            "sufficient": self.sufficient,
            "note": note,
            "basis": self.basis,
            "change": self.change,
            "metrics": {c.name: c.view() for c in self.checks},
        }


def build_baseline(store, session: dict, own_values: dict[str, float | None], pricer,
                   own_usage=(), own_counts: tuple[int, int] = (0, 0)) -> Baseline:
    """Load the baseline of `session` and check `own_values` against it.

    Which of the agent's sessions of the window (newest BASELINE_CAP) make the baseline:
    - when the session's configuration (services/changes.py: model, release) came with a
      change that regressed and is not acknowledged, the sessions before that change
      (basis `before_change`): a regression does not become the baseline;
    - else, when 3+ of them ran the session's configuration, those (basis `configuration`):
      baselines are split by model and release;
    - else all of them (basis `agent`).
    """
    from obsctl.services import changes

    until = session["started_at"]
    since = format_ts(parse_ts(until) - timedelta(days=WINDOW_DAYS))
    args = (session["agent_name"], since, until, session["session_id"])
    rows = store.triage.baseline_sessions(*args, BASELINE_CAP)
    if len(rows) < MIN_BASELINE_SESSIONS:
        return Baseline(since, until, len(rows), [], {})
    usage: dict[str, list] = {}
    for session_id, model, *tokens in store.triage.baseline_model_tokens(*args, BASELINE_CAP):
        usage.setdefault(session_id, []).append((model, *tokens))
    runs = [changes.Run(r["session_id"], r["started_at"],
                        changes.config_of(usage.get(r["session_id"], ()), changes.release_of(r["metadata"])),
                        r["body_events"], r["error_events"], usage.get(r["session_id"], []))
            for r in reversed(rows)]
    own = changes.Run(session["session_id"], until,
                      changes.config_of(own_usage, changes.release_of(session.get("metadata"))),
                      own_counts[0], own_counts[1], list(own_usage))
    chosen, basis, change = rows, "agent", None
    if own.config is not None:
        runs.append(own)
        came = [c for c in changes.detect(session["agent_name"], runs) if own.config.matches(c.new)]
        if came:
            after = [r for r in runs[came[-1].at:] if r.config is not None and r.config.matches(came[-1].new)]
            acks = store.changes.acknowledged([changes.id_of(came[-1].agent, after[0].started_at)])
            change = changes.evaluate(store, came[-1], after, pricer, acks)
        if change is not None and changes.is_open_regression(change):
            before = [r for r in rows if r["started_at"] < change["changed_at"]]
            if len(before) >= MIN_BASELINE_SESSIONS:
                chosen, basis = before, "before_change"
        if basis == "agent":
            configs = {r.session_id: r.config for r in runs}
            same = [r for r in rows if (config := configs[r["session_id"]]) is not None
                    and config.matches(own.config)]
            if len(same) >= MIN_BASELINE_SESSIONS and len(same) < len(rows):
                chosen, basis = same, "configuration"
    model_tokens: dict[str, int] = {}
    for items in usage.values():
        for model, tokens_in, tokens_out, *_ in items:
            if model is not None:
                model_tokens[model] = model_tokens.get(model, 0) + tokens_in + tokens_out
    samples: dict[str, list[float]] = {name: [] for name in METRICS}
    for row in chosen:
        cost, _ = priced_total(usage.get(row["session_id"], ()), pricer)
        for name, value in session_metric_values(row, cost).items():
            if value is not None:
                samples[name].append(value)
    checks = [check_metric(name, own_values[name], samples[name]) for name in METRICS]
    latency = store.triage.baseline_durations([r["session_id"] for r in chosen[:LATENCY_SESSIONS]])
    usual = max(sorted(model_tokens), key=model_tokens.__getitem__) if model_tokens else None
    return Baseline(since, until, len(chosen), checks, latency, usual, basis, change)


def slow_threshold(kind: tuple[str, str | None], baseline: Baseline,
                   session_durations: list[float]) -> tuple[float, str, float, float | None] | None:
    """(threshold_ms, source, reference median, reference p95) for one event kind, or None.

    With 20+ baseline samples of the kind: max(2 x baseline p95, 3 x baseline median, 1 s).
    Otherwise, with 5+ successful events of the kind in the session itself: max(5 x their
    median, 1 s). Sub-second events are never slow.
    """
    reference = baseline.latency.get(kind) if baseline.sufficient else None
    if reference and len(reference) >= LATENCY_MIN_SAMPLES:
        mid, p95 = median(reference), nearest_rank(reference, 95)
        return max(2 * p95, 3 * mid, SLOW_FLOOR_MS), "baseline", mid, p95
    if len(session_durations) >= SESSION_MIN_SAMPLES:
        mid = median(session_durations)
        return max(5 * mid, SLOW_FLOOR_MS), "session", mid, None
    return None
