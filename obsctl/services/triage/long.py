"""The analysis of a long session (more than analysis.ANALYSIS_EVENTS events), in bounded
memory: the same `SessionAnalysis` as a session read whole, built from SQL aggregates and
bounded reads (store/long_session_sql.py) instead of every event.

- Counts, costs, tool statistics and latency come from one aggregate of the session's events
  by type, outcome, model and tool, over the whole session.
- Errors: the first ERRORS_ANALYSED failed events in order; error groups, kinds and cascades
  are built from them, and the places of those the postmortem timeline shows are counted. The error counts and rates
  always cover every error.
- Loops: the session's tool calls are streamed once through the same LoopFinder, which keeps
  a run as its first and last call; the LOOPS_KEPT longest loops are kept. SQL leaves out
  the calls that cannot change what it finds (long_session_sql.tool_calls): a call whose
  key (tool and input) the session has fewer than LOOP_MIN_REPEATS times, except the last
  successful one before a call that can loop.
- The postmortem's timeline gets the first and last ENDS_READ events.

On a session of up to ANALYSIS_EVENTS events the two give the same report (a test builds
every session both ways); a longer session's report says what it left out
(`timeline_left_out`, `cascades_left_out`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson

import obsctl.services.triage.anomaly as anomaly
from obsctl.services.call_keys import call_key, output_key
from obsctl.services.error_kinds import group_errors
from obsctl.services.sessions.fields import as_text
from obsctl.services.triage.cost import cost_summary, model_usage, usage_rows
from obsctl.services.triage.facts import (
    ENDS_READ,
    ERRORS_PLACED,
    LOOP_MIN_REPEATS,
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
from obsctl.vocabulary import LIFECYCLE_TYPES, tool_field

ERRORS_ANALYSED = 20_000
LOOPS_KEPT = 100
# A failed model call's next model call is looked up in SQL, for at most this many errors per
# analysis (a failed tool call's next tool call comes with the errors).
MODEL_LOOKUPS = 200
T = TypeVar("T")


class Call:
    """A tool call of the stream (long_session_sql.TOOL_CALL_COLUMNS), as LoopFinder reads it.
    Its tool_call and output_data JSON come only with a call whose key can loop, and are read
    only when the finder asks what it returned; a call stored without a key (before m034)
    gets it from that JSON here."""

    __slots__ = ("seq", "event_id", "timestamp", "tool_name", "is_error", "duration_ms", "tool_key",
                 "_tool_call", "_output_data", "_call", "_output_key")

    def __init__(self, row: tuple) -> None:
        (self.seq, self.event_id, self.timestamp, self.tool_name, is_error, duration, self.tool_key,
         self._tool_call, self._output_data) = row
        self.is_error = bool(is_error)
        self.duration_ms = None if duration is None else float(duration)
        self._call: Any = _UNREAD
        self._output_key: Any = _UNREAD
        if self.tool_key is None:
            self.tool_key = call_key(self.tool_name, self.call)

    @property
    def call(self) -> dict | None:
        if self._call is _UNREAD:
            self._call = orjson.loads(self._tool_call) if self._tool_call is not None else None
        return self._call

    @property
    def output_key(self) -> bytes | None:
        if self._output_key is _UNREAD:
            self._output_key = output_key(self.call, self._output_data)
        return self._output_key

    @property
    def order(self) -> tuple[str, int]:
        return (self.timestamp, self.seq)

    @property
    def tool_input(self) -> str | None:
        return as_text(tool_field(self.call, "input"))


_UNREAD = object()


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


def _error_reads(store, session_id: str, head: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    """(the first ERRORS_ANALYSED failed body events, the places of the first ERRORS_PLACED of
    them after the first events `head`: (id, events since the error before it))."""
    rows = store.triage.session_error_rows(session_id, ERRORS_ANALYSED)
    if not rows or not head:
        return rows, []
    last = head[-1]  # STEP_COLUMNS: the row id first, the timestamp fourth
    return rows, store.triage.session_error_places(session_id, (last[3], last[0]), ERRORS_PLACED)


def _errors(rows: list[tuple], place_rows: list[tuple],
            steps: list[Step]) -> tuple[list[Step], list[int], dict[str, tuple[str, bool]]]:
    """(the analysed errors, the successful body events before each since the error before it,
    counted up to 4, {failed tool call's event id: (the next tool call's tool, whether it
    failed)}) from _error_reads. An error's place in the session (`index`) is known in the
    first and last ENDS_READ events and for the first ERRORS_PLACED after them (what the
    postmortem timeline shows); elsewhere it is -1."""
    places = {s.seq: s.index for s in steps}
    index = -1
    for seq, between in place_rows:
        index += between + 1
        places.setdefault(seq, index)
    errors, successes_before, following = [], [], {}
    for row in rows:
        step = step_of(places.get(row[0], -1), row)
        # Kept for the timeline's description and the cascades, not for loops or outputs.
        step.output_data = step.decision_trace = step.tool_key = step.output_key = None
        successes_before.append(row[STEP_ROW_WIDTH])
        errors.append(step)
        next_tool, next_failed = row[STEP_ROW_WIDTH + 1:STEP_ROW_WIDTH + 3]
        if next_tool is not None:
            following[step.event_id] = (next_tool, bool(next_failed))
    return errors, successes_before, following


def _sample(head: list[tuple], tail: list[tuple], step_count: int) -> list[Step]:
    """The steps of the first events (`head`) and the last (`tail`, newest first)."""
    steps = {i: step_of(i, row) for i, row in enumerate(head)}
    for k, row in enumerate(tail):
        index = step_count - 1 - k
        if index not in steps:
            steps[index] = step_of(index, row)
    return [steps[i] for i in sorted(steps)]


def _loops(store, session_id: str) -> tuple[list, list]:
    """(loops, loops of successful calls)."""
    loops, success_loops = _KeptLoops(), _KeptLoops()
    for row in store.triage.iter_tool_calls(session_id, LOOP_MIN_REPEATS):
        call = Call(row)
        loops.feed(call)
        if not call.is_error:
            success_loops.feed(call)
    return loops.finish(), success_loops.finish()


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


def _beside(pool: ThreadPoolExecutor, store, work: Callable[..., T], *args) -> Callable[[], T]:
    """`work(store, *args)` started on one of `pool`'s threads, with its own connection
    (store.side_reader); call what this returns for its result. On a store without a side
    reader, the work runs on this thread when its result is asked for."""
    def run() -> list[T]:  # the result, or nothing without a side reader
        with store.side_reader() as side:
            return [] if side is None else [work(side, *args)]

    future = pool.submit(run)

    def result() -> T:
        found = future.result()
        return found[0] if found else work(store, *args)
    return result


def analyse_long(store, session: dict, pricer) -> SessionAnalysis:
    """The analysis of a long session (see the module docstring). The tool calls and the errors
    are read on two more threads while this one reads the rest: the engine does most of the
    work of each read, so they overlap (on PostgreSQL each has its own server process)."""
    session_id = session["session_id"]
    head = store.triage.session_end_rows(session_id, ENDS_READ, False)
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="obsctl-triage")
    try:
        loops_read = _beside(pool, store, _loops, session_id)
        errors_read = _beside(pool, store, _error_reads, session_id, head)
    finally:
        pool.shutdown(wait=False)  # each thread ends with its read
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

    steps = _sample(head, store.triage.session_end_rows(session_id, ENDS_READ, True), step_count)
    errors, successes_before, following = _errors(*errors_read(), steps)
    for step in errors:
        if step.tool_name is not None:
            modes = tools[step.tool_name].failure_modes
            modes[step.fingerprint] = modes.get(step.fingerprint, 0) + 1
    for step in steps:
        threshold = thresholds.get(step.kind_key)
        step.slow = (threshold is not None and not step.is_error and not step.lifecycle
                     and step.duration_ms is not None and step.duration_ms > threshold)
    loops, success_loops = loops_read()
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
