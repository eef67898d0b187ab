"""The analysis of a long session (more than analysis.ANALYSIS_EVENTS events), in bounded
memory: the same `SessionAnalysis` as a session read whole, built from SQL aggregates and
bounded reads (store/long_session_sql.py) instead of every event.

- Counts, costs, tool statistics and latency come from one aggregate of the session's events
  by type, outcome, model and tool, over the whole session.
- Errors: the first ERRORS_ANALYSED failed events in order; error groups, kinds and cascades
  are built from them, and the places of those the postmortem timeline shows are counted. The error counts and rates
  always cover every error.
- Loops: the session's tool calls are streamed once through the same LoopFinder, which keeps
  a run as its first and last call; the LOOPS_KEPT longest loops are kept.
- The postmortem's timeline gets the first and last ENDS_READ events.

On a session of up to ANALYSIS_EVENTS events the two give the same report (a test builds
every session both ways); a longer session's report says what it left out
(`timeline_left_out`, `cascades_left_out`).
"""

from __future__ import annotations

import contextlib
import heapq

import orjson

import obsctl.services.triage.anomaly as anomaly
from obsctl.services.error_kinds import group_errors
from obsctl.services.sessions.fields import as_text
from obsctl.services.triage.cost import cost_summary, model_usage, usage_rows
from obsctl.services.triage.facts import (
    ENDS_READ,
    ERRORS_PLACED,
    SLOW_IDS,
    STEP_ROW_WIDTH,
    LoopFinder,
    SessionAnalysis,
    SlowKind,
    Step,
    ToolStats,
    sort_slow,
    step_of,
)
from obsctl.vocabulary import LIFECYCLE_TYPES

ERRORS_ANALYSED = 20_000
LOOPS_KEPT = 100
# A failed model call's next model call is looked up in SQL, for at most this many errors per
# analysis (tool calls' come with the stream of calls).
MODEL_LOOKUPS = 200


class Call:
    """A tool call of the stream, as LoopFinder reads it."""

    __slots__ = ("seq", "event_id", "timestamp", "tool_name", "is_error", "duration_ms", "tool_key",
                 "raw_input", "output_key")

    def __init__(self, row: tuple) -> None:
        (self.seq, self.event_id, self.timestamp, self.tool_name, is_error, duration, self.raw_input,
         output) = row
        self.is_error = bool(is_error)
        self.duration_ms = None if duration is None else float(duration)
        self.tool_key = (self.tool_name, self.raw_input)
        self.output_key = output

    @property
    def order(self) -> tuple[str, int]:
        return (self.timestamp, self.seq)

    @property
    def tool_input(self) -> str | None:
        raw = self.raw_input
        if isinstance(raw, str):
            # JSON text, except a string, which SQLite's json_extract gives unquoted.
            with contextlib.suppress(orjson.JSONDecodeError):
                raw = orjson.loads(raw)
        return as_text(raw)


class _KeptLoops(LoopFinder):
    """A LoopFinder that keeps the LOOPS_KEPT longest loops (in session order)."""

    def _keep(self, loop) -> None:
        self.loops.append(loop)
        if len(self.loops) > 2 * LOOPS_KEPT:
            self.loops = _longest(self.loops)

    def finish(self):
        return _longest(super().finish())


def _longest(loops: list) -> list:
    kept = sorted(range(len(loops)), key=lambda i: (-loops[i].count, i))[:LOOPS_KEPT]
    return [loops[i] for i in sorted(kept)]


def _errors(store, session_id: str, types: list[str], steps: list[Step]) -> tuple[list[Step], list[int]]:
    """(the analysed errors, of these body event types, the successful body events before each
    since the error before it, counted up to 4). An error's place in the session (`index`) is
    known in the first and last ENDS_READ events and for the first ERRORS_PLACED after them
    (what the postmortem timeline shows); elsewhere it is -1."""
    rows = store.triage.session_error_rows(session_id, types, ERRORS_ANALYSED) if types else []
    places = {s.seq: s.index for s in steps}
    if rows and steps:
        head_last = max((s for s in steps if s.index < ENDS_READ), key=lambda s: s.index)
        index = -1
        for seq, between in store.triage.session_error_places(session_id, types, head_last.order, ERRORS_PLACED):
            index += between + 1
            places.setdefault(seq, index)
    errors, successes_before = [], []
    for row in rows:
        step = step_of(places.get(row[0], -1), row)
        # Kept for the timeline's description and the cascades, not for loops or outputs.
        step.output_data = step.decision_trace = step.tool_key = step.output_key = None
        successes_before.append(row[STEP_ROW_WIDTH])
        errors.append(step)
    return errors, successes_before


def _sample(store, session_id: str, step_count: int) -> list[Step]:
    """The first and last ENDS_READ events."""
    head = store.triage.session_end_rows(session_id, ENDS_READ, False)
    tail = store.triage.session_end_rows(session_id, ENDS_READ, True)
    steps = {i: step_of(i, row) for i, row in enumerate(head)}
    for k, row in enumerate(tail):
        index = step_count - 1 - k
        if index not in steps:
            steps[index] = step_of(index, row)
    return [steps[i] for i in sorted(steps)]


def _loops(store, session_id: str) -> tuple[list, list, dict]:
    """(loops, loops of successful calls, {failed tool call's event id: (next tool, failed)})."""
    loops, success_loops = _KeptLoops(), _KeptLoops()
    following: dict[str, tuple[str, bool]] = {}
    previous = None
    for row in store.triage.iter_tool_calls(session_id):
        call = Call(row)
        loops.feed(call)
        if not call.is_error:
            success_loops.feed(call)
        if previous is not None and previous.is_error:
            following[previous.event_id] = (call.tool_name, call.is_error)
        previous = call
    return loops.finish(), success_loops.finish(), following


def _slow(store, session_id: str, durations: dict, baseline, tools: dict) -> list[SlowKind]:
    slow = []
    for (event_type, tool_name, is_error), values in durations.items():
        if is_error or not values:
            continue
        reference = anomaly.slow_threshold((event_type, tool_name), baseline, values)
        if reference is None:
            continue
        threshold, source, mid, p95 = reference
        hits = [v for v in values if v > threshold]
        if not hits:
            continue
        first = heapq.nsmallest(SLOW_IDS, store.triage.iter_slow_ids(session_id, event_type, tool_name, threshold))
        slow.append(SlowKind(event_type, tool_name, threshold, source, mid, p95, len(hits), max(hits),
                             [row[2] for row in first]))
        if tool_name is not None and tool_name in tools:
            tools[tool_name].slow_calls += len(hits)
    return sort_slow(slow)


def analyse_long(store, session: dict, pricer) -> SessionAnalysis:
    """The analysis of a long session (see the module docstring)."""
    session_id = session["session_id"]
    breakdown = store.triage.session_breakdown(session_id)
    body = [r for r in breakdown if r[0] not in LIFECYCLE_TYPES]
    step_count = sum(r[4] for r in breakdown)
    body_events = sum(r[4] for r in body)
    error_events = sum(r[4] for r in body if r[1])
    usage = usage_rows((r[0], r[2], r[1], r[4], r[5], r[6], r[9], r[10], r[11]) for r in body)
    cost = cost_summary(usage, pricer)
    own = anomaly.session_metric_values(session, cost["total_usd"])
    baseline = anomaly.build_baseline(store, session, own, pricer, model_usage(usage), (body_events, error_events))

    durations: dict[tuple, list[float]] = {}
    tools: dict[str, ToolStats] = {}
    tool_durations: dict[str, list[float]] = {}
    for event_type, is_error, _model, tool_name, events, _, _, _, values, *_ in body:
        values = [float(v) for v in values]
        durations.setdefault((event_type, tool_name, bool(is_error)), []).extend(values)
        if tool_name is not None:
            stats = tools.setdefault(tool_name, ToolStats(tool_name))
            stats.calls += events
            stats.failures += events if is_error else 0
            tool_durations.setdefault(tool_name, []).extend(values)
    for name, stats in tools.items():
        stats.set_durations(tool_durations.pop(name))
    slow = _slow(store, session_id, durations, baseline, tools)
    thresholds = {(k.event_type, k.tool_name): k.threshold_ms for k in slow}

    steps = _sample(store, session_id, step_count)
    errors, successes_before = _errors(store, session_id, sorted({r[0] for r in body if r[1]}), steps)
    for step in errors:
        if step.tool_name is not None:
            modes = tools[step.tool_name].failure_modes
            modes[step.fingerprint] = modes.get(step.fingerprint, 0) + 1
    for step in steps:
        threshold = thresholds.get(step.kind_key)
        step.slow = (threshold is not None and not step.is_error and not step.lifecycle
                     and step.duration_ms is not None and step.duration_ms > threshold)
    loops, success_loops, following = _loops(store, session_id)
    last = store.triage.session_last_body(session_id, False)
    last_success = store.triage.session_last_body(session_id, True)
    lookups = [0]

    def next_call(step: Step, attr: str) -> tuple[str, bool] | None:
        if attr == "tool_name":
            return following.get(step.event_id)
        if lookups[0] >= MODEL_LOOKUPS:
            return None
        lookups[0] += 1
        row = store.triage.next_model_call(session_id, step.timestamp, step.seq)
        return None if row is None else (row[0], bool(row[1]))

    return SessionAnalysis(
        session=session, steps=steps, step_count=step_count, errors=errors,
        successes_before=successes_before, groups=group_errors(errors), tools=dict(sorted(tools.items())),
        loops=loops, success_loops=success_loops, slow=slow, baseline=baseline, cost=cost, usage=usage,
        failed=session["status"] == "error" or bool(last and last[2]), duration_ms=own["duration_ms"],
        body_events=body_events, error_events=error_events,
        processing_ms=float(sum(r[7] for r in body)),
        last_success=None if last_success is None else (last_success[0], last_success[1]),
        next_call=next_call, long=True,
    )
