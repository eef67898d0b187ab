"""One pass over a session's events: the facts that triage and postmortems are built from.

`analyse_session` loads the session and its events once and derives error groups, tool
statistics, loops, slow events, the baseline checks and costs. The triage report and the
postmortem are two views of the same `SessionAnalysis`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import orjson

import obsctl.services.triage.anomaly as anomaly
from obsctl.services.error_kinds import (
    ErrorGroup,
    classify_error,
    fingerprint,
    group_errors,
    normalise_message,
)
from obsctl.services.rates import SessionEventCounts
from obsctl.services.sessions import require_session
from obsctl.services.sessions.fields import as_text, error_message, excerpt, main_text
from obsctl.services.triage.cost import cost_summary
from obsctl.timeutil import ms_between
from obsctl.vocabulary import LIFECYCLE_TYPES, tool_field

LOOP_MIN_REPEATS = 5
MESSAGE_CHARS = 300


@dataclass(slots=True)
class Step:
    """One stored event, reduced to what the analysis needs."""

    index: int
    event_id: str
    event_type: str
    timestamp: str
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    duration_ms: float | None
    tool_name: str | None
    tool_key: bytes | None  # tool name and canonical input: equal keys = identical calls
    tool_input: str | None
    is_error: bool
    lifecycle: bool
    parent_id: str | None
    output_data: str | None  # raw JSON, parsed only for descriptions
    decision_trace: str | None
    message: str | None = None
    pattern: str = ""
    fingerprint: str = ""
    kind: str = ""
    slow: bool = False
    output_key: bytes | None = None  # what the step returned (tool output or output_data), canonical

    @property
    def kind_key(self) -> tuple[str, str | None]:
        return (self.event_type, self.tool_name)


def _step(index: int, row: tuple) -> Step:
    (_id, event_id, event_type, timestamp, model, tokens_in, tokens_out, duration_ms, output_data,
     tool_call, decision_trace, tool_name, is_error, parent_id) = row
    call = orjson.loads(tool_call) if tool_call is not None else None
    tool_key = tool_input = output_key = None
    if tool_name is not None:
        raw_input = tool_field(call, "input")
        tool_key = orjson.dumps([tool_name, raw_input], option=orjson.OPT_SORT_KEYS)
        tool_input = as_text(raw_input)
        returned = tool_field(call, "output")
        if returned is None and output_data is not None:
            returned = orjson.loads(output_data)
        if returned is not None:
            output_key = orjson.dumps(returned, option=orjson.OPT_SORT_KEYS)
    step = Step(index, event_id, event_type, timestamp, model, tokens_in, tokens_out,
                None if duration_ms is None else float(duration_ms), tool_name, tool_key, tool_input,
                bool(is_error), event_type in LIFECYCLE_TYPES, parent_id, output_data, decision_trace,
                output_key=output_key)
    if step.is_error:
        output = orjson.loads(output_data) if output_data is not None else None
        message = error_message(output, call) or (main_text(output) if output else None)
        step.message = excerpt(message, MESSAGE_CHARS)
        step.pattern = normalise_message(message) if message else ""
        step.fingerprint = fingerprint(event_type, tool_name, step.pattern)
        step.kind = classify_error(event_type, message)
    return step


@dataclass
class ToolStats:
    """Calls of one tool in the session."""

    tool_name: str
    calls: int = 0
    failures: int = 0
    slow_calls: int = 0
    durations: list[float] = field(default_factory=list)
    failure_modes: dict[str, int] = field(default_factory=dict)  # fingerprint -> count

    @property
    def failure_rate(self) -> float:
        return self.failures / self.calls if self.calls else 0.0

    def percentile(self, pct: int) -> float | None:
        return anomaly.nearest_rank(sorted(self.durations), pct) if self.durations else None


@dataclass
class Loop:
    """A run of identical tool calls in a row."""

    tool_name: str
    tool_input: str | None
    steps: list[Step]

    @property
    def count(self) -> int:
        return len(self.steps)

    @property
    def identical_outputs(self) -> bool:
        """Every call of the run returned the same thing (and returned something)."""
        first = self.steps[0].output_key
        return first is not None and all(s.output_key == first for s in self.steps)


@dataclass
class SlowKind:
    """Slow successful events of one kind (event type and tool)."""

    event_type: str
    tool_name: str | None
    threshold_ms: float
    source: str  # baseline or session
    median_ms: float
    p95_ms: float | None
    steps: list[Step]


@dataclass
class SessionAnalysis:
    session: dict
    steps: list[Step]
    work: list[Step]  # non-lifecycle steps
    errors: list[Step]
    groups: list[ErrorGroup]
    tools: dict[str, ToolStats]
    loops: list[Loop]
    success_loops: list[Loop]
    slow: list[SlowKind]
    baseline: anomaly.Baseline
    cost: dict
    failed: bool
    duration_ms: float | None

    @property
    def counts(self) -> SessionEventCounts:
        """The session's event counts and error event rate (services/rates.py)."""
        return SessionEventCounts(
            event_count=self.session["event_count"], error_count=self.session["error_count"],
            body_events=len(self.work), error_events=len(self.errors))

    @property
    def error_rate(self) -> float:
        """Share (0-1) of the body events (non-lifecycle) that are errors, unrounded: the
        health score's term. Reports show `counts.error_event_rate` instead."""
        return len(self.errors) / len(self.work) if self.work else 0.0

    def elapsed_ms(self, step: Step) -> float | None:
        elapsed = ms_between(self.session["started_at"], step.timestamp)
        return None if elapsed is None else round(elapsed, 3)


def find_loops(tool_steps: list[Step]) -> list[Loop]:
    """Runs of LOOP_MIN_REPEATS or more identical tool calls (same name and input) in a row.

    "In a row" is within the sequence of tool calls: an LLM call or decision between two
    identical calls does not break the run, and neither does a failed call of another tool or
    input (a failed attempt inside the loop: one more error must never make the loop look
    shorter); a successful other call does. Failed calls passed over so are looked at again
    for runs of their own once the run they interrupted ends.
    """
    loops: list[Loop] = []
    run: list[Step] = []
    held: list[Step] = []  # failed calls of another kind inside the current run
    pending = deque(tool_steps)
    while pending or held:
        if not pending:  # the calls passed over form runs of their own
            _close_run(run, loops)
            run, held, pending = [], [], deque(held)
            continue
        step = pending.popleft()
        if run and step.tool_key != run[0].tool_key:
            if step.is_error:
                held.append(step)
                continue
            _close_run(run, loops)
            run = []
            if held:
                pending.appendleft(step)
                pending.extendleft(reversed(held))
                held = []
                continue
        run.append(step)
    _close_run(run, loops)
    return loops


def _close_run(run: list[Step], loops: list[Loop]) -> None:
    if len(run) >= LOOP_MIN_REPEATS:
        loops.append(Loop(run[0].tool_name, run[0].tool_input, run))


def _tool_stats(work: list[Step]) -> dict[str, ToolStats]:
    tools: dict[str, ToolStats] = {}
    for step in work:
        if step.tool_name is None:
            continue
        stats = tools.get(step.tool_name)
        if stats is None:
            stats = tools[step.tool_name] = ToolStats(step.tool_name)
        stats.calls += 1
        if step.duration_ms is not None:
            stats.durations.append(step.duration_ms)
        if step.is_error:
            stats.failures += 1
            stats.failure_modes[step.fingerprint] = stats.failure_modes.get(step.fingerprint, 0) + 1
        elif step.slow:
            stats.slow_calls += 1
    return dict(sorted(tools.items()))


def _mark_slow(work: list[Step], baseline: anomaly.Baseline) -> list[SlowKind]:
    """Mark and group slow successful events; failed events are judged as errors instead."""
    by_kind: dict[tuple, list[Step]] = {}
    for step in work:
        if not step.is_error and step.duration_ms is not None:
            by_kind.setdefault(step.kind_key, []).append(step)
    slow: list[SlowKind] = []
    for kind, steps in by_kind.items():
        reference = anomaly.slow_threshold(kind, baseline, [s.duration_ms for s in steps])
        if reference is None:
            continue
        threshold, source, mid, p95 = reference
        hits = [s for s in steps if s.duration_ms > threshold]
        for s in hits:
            s.slow = True
        if hits:
            slow.append(SlowKind(kind[0], kind[1], threshold, source, mid, p95, hits))
    return sorted(slow, key=lambda k: (-len(k.steps), k.event_type, k.tool_name or ""))


def analyse_session(store, session_id: str, pricer) -> SessionAnalysis:
    """Load one session (NotFound if unknown) and derive everything triage needs."""
    session = require_session(store, session_id)
    steps = [_step(i, row) for i, row in enumerate(store.triage.session_steps(session_id))]
    work = [s for s in steps if not s.lifecycle]
    errors = [s for s in work if s.is_error]
    cost = cost_summary(steps, pricer)
    own = anomaly.session_metric_values(session, cost["total_usd"])
    usage = [(s.model, s.tokens_in, s.tokens_out) for s in work if (s.tokens_in or 0) + (s.tokens_out or 0) > 0]
    baseline = anomaly.build_baseline(store, session, own, pricer, usage, (len(work), len(errors)))
    slow = _mark_slow(work, baseline)
    tool_steps = [s for s in work if s.tool_name is not None]
    failed = session["status"] == "error" or bool(work and work[-1].is_error)
    return SessionAnalysis(
        session=session, steps=steps, work=work, errors=errors, groups=group_errors(errors),
        tools=_tool_stats(work), loops=find_loops(tool_steps),
        success_loops=find_loops([s for s in tool_steps if not s.is_error]), slow=slow,
        baseline=baseline, cost=cost, failed=failed, duration_ms=own["duration_ms"],
    )
