"""One pass over a session's events: the facts that triage and postmortems are built from.

`analyse_session` loads the session and derives error groups, tool statistics, loops, slow
events, the baseline checks and costs. The triage report and the postmortem are two views of
the same `SessionAnalysis` (services/triage/facts.py). A session of up to ANALYSIS_EVENTS
events is read whole; a longer one (an agent that ran for days) is analysed from SQL
aggregates and bounded reads (services/triage/long.py), so that its memory does not grow with
its events.
"""

from __future__ import annotations

from collections.abc import Callable

import obsctl.services.triage.anomaly as anomaly
from obsctl.services.error_kinds import group_errors
from obsctl.services.sessions import require_session
from obsctl.services.triage.cost import cost_summary, model_usage, usage_rows
from obsctl.services.triage.facts import (
    SLOW_IDS,
    SessionAnalysis,
    SlowKind,
    Step,
    ToolStats,
    find_loops,
    sort_slow,
    step_of,
)
from obsctl.services.triage.long import analyse_long

# Sessions with more events are analysed from aggregates (services/triage/long.py); the same
# count as the events `GET /sessions/<id>` answers whole and a whole postmortem timeline.
ANALYSIS_EVENTS = 10_000


def _tool_stats(work: list[Step]) -> dict[str, ToolStats]:
    tools: dict[str, ToolStats] = {}
    durations: dict[str, list[float]] = {}
    for step in work:
        if step.tool_name is None:
            continue
        stats = tools.get(step.tool_name)
        if stats is None:
            stats = tools[step.tool_name] = ToolStats(step.tool_name)
            durations[step.tool_name] = []
        stats.calls += 1
        if step.duration_ms is not None:
            durations[step.tool_name].append(step.duration_ms)
        if step.is_error:
            stats.failures += 1
            stats.failure_modes[step.fingerprint] = stats.failure_modes.get(step.fingerprint, 0) + 1
        elif step.slow:
            stats.slow_calls += 1
    for name, stats in tools.items():
        stats.set_durations(durations[name])
    return dict(sorted(tools.items()))


def _mark_slow(work: list[Step], baseline: anomaly.Baseline) -> list[SlowKind]:
    """Mark and group slow successful events; failed events are judged as errors instead."""
    by_kind: dict[tuple, list[tuple[Step, float]]] = {}  # kind -> (step, its duration)
    for step in work:
        if not step.is_error and step.duration_ms is not None:
            by_kind.setdefault(step.kind_key, []).append((step, step.duration_ms))
    slow: list[SlowKind] = []
    for kind, timed in by_kind.items():
        reference = anomaly.slow_threshold(kind, baseline, [ms for _, ms in timed])
        if reference is None:
            continue
        threshold, source, mid, p95 = reference
        hits = [(s, ms) for s, ms in timed if ms > threshold]
        for s, _ in hits:
            s.slow = True
        if hits:
            slow.append(SlowKind(kind[0], kind[1], threshold, source, mid, p95, len(hits),
                                 max(ms for _, ms in hits), [s.event_id for s, _ in hits[:SLOW_IDS]]))
    return sort_slow(slow)


def _next_in(steps: list[Step]) -> Callable[[Step, str], tuple[str, bool] | None]:
    def next_call(step: Step, attr: str) -> tuple[str, bool] | None:
        # Indexed, not sliced: a copy of the rest of the steps per error is quadratic.
        following = next((steps[i] for i in range(step.index + 1, len(steps))
                          if not steps[i].lifecycle and getattr(steps[i], attr) is not None), None)
        return None if following is None else (getattr(following, attr), following.is_error)
    return next_call


def analyse_session(store, session_id: str, pricer) -> SessionAnalysis:
    """Load one session (NotFound if unknown) and derive everything triage needs."""
    session = require_session(store, session_id)
    if session["event_count"] > ANALYSIS_EVENTS:
        return analyse_long(store, session, pricer)
    steps = [step_of(i, row) for i, row in enumerate(store.triage.session_steps(session_id))]
    work = [s for s in steps if not s.lifecycle]
    errors = [s for s in work if s.is_error]
    usage = usage_rows((s.event_type, s.model, s.is_error, 1, s.tokens_in, s.tokens_out, s.tokens_cache_read,
                        s.tokens_cache_write, s.tokens_reasoning) for s in work)
    cost = cost_summary(usage, pricer)
    own = anomaly.session_metric_values(session, cost["total_usd"])
    baseline = anomaly.build_baseline(store, session, own, pricer, model_usage(usage), (len(work), len(errors)))
    slow = _mark_slow(work, baseline)
    tool_steps = [s for s in work if s.tool_name is not None]
    successes_before, successes = [], 0
    for step in work:
        if step.is_error:
            successes_before.append(successes)
            successes = 0
        else:
            successes += 1
    last_success = next((s.order for s in reversed(work) if not s.is_error), None)
    failed = session["status"] == "error" or bool(work and work[-1].is_error)
    return SessionAnalysis(
        session=session, steps=steps, step_count=len(steps), errors=errors,
        successes_before=successes_before, groups=group_errors(errors), tools=_tool_stats(work),
        loops=find_loops(tool_steps), success_loops=find_loops([s for s in tool_steps if not s.is_error]),
        slow=slow, baseline=baseline, cost=cost, usage=usage, failed=failed,
        duration_ms=own["duration_ms"], body_events=len(work), error_events=len(errors),
        processing_ms=sum((s.duration_ms or 0.0 for s in work), 0.0), last_success=last_success,
        next_call=_next_in(steps),
    )
