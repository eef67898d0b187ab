"""The facts that triage and postmortems are built from: a session's steps, tool statistics,
loops, slow events, and the `SessionAnalysis` that holds them (services/triage/analysis.py
derives it from a session's events; services/triage/long.py from a long session's aggregates).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

import orjson

import obsctl.services.triage.anomaly as anomaly
from obsctl.services.call_keys import call_key, output_key
from obsctl.services.error_kinds import (
    ErrorGroup,
    classify_error,
    fingerprint,
    normalise_message,
)
from obsctl.services.rates import SessionEventCounts
from obsctl.services.sessions.fields import as_text, error_message, excerpt, main_text
from obsctl.timeutil import ms_between
from obsctl.vocabulary import LIFECYCLE_TYPES, tool_field

LOOP_MIN_REPEATS = 5
MESSAGE_CHARS = 300
# A long session's analysis reads its first and last ENDS_READ events (and its errors), and
# the places in the session of its first ERRORS_PLACED errors after the first events: what the
# postmortem timeline shows.
ENDS_READ = 1_000
ERRORS_PLACED = 1_000


@dataclass(slots=True)
class Step:
    """One stored event, reduced to what the analysis needs."""

    index: int  # place in the session, from 0
    seq: int  # the stored row's id: (timestamp, seq) is the session's order
    event_id: str
    event_type: str
    timestamp: str
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    duration_ms: float | None
    tool_name: str | None
    tool_key: int | None  # services/call_keys.call_key: equal keys = identical calls
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
    # The cache read and write parts of tokens_in, the reasoning part of tokens_out.
    tokens_cache_read: int | None = None
    tokens_cache_write: int | None = None
    tokens_reasoning: int | None = None

    @property
    def kind_key(self) -> tuple[str, str | None]:
        return (self.event_type, self.tool_name)

    @property
    def order(self) -> tuple[str, int]:
        return (self.timestamp, self.seq)


# How many columns a stored event's row has (the store's STEP_COLUMNS); a query may add more.
STEP_ROW_WIDTH = 17


def step_of(index: int, row: tuple) -> Step:
    """The step of a stored event's row (store STEP_COLUMNS) at place `index`."""
    (seq, event_id, event_type, timestamp, model, tokens_in, tokens_out, duration_ms, output_data,
     tool_call, decision_trace, tool_name, is_error, parent_id, cache_read, cache_write,
     reasoning) = row[:STEP_ROW_WIDTH]
    call = orjson.loads(tool_call) if tool_call is not None else None
    tool_key = tool_input = returned = None
    if tool_name is not None:
        tool_key = call_key(tool_name, call)
        tool_input = as_text(tool_field(call, "input"))
        returned = output_key(call, output_data)
    step = Step(index, seq, event_id, event_type, timestamp, model, tokens_in, tokens_out,
                None if duration_ms is None else float(duration_ms), tool_name, tool_key, tool_input,
                bool(is_error), event_type in LIFECYCLE_TYPES, parent_id, output_data, decision_trace,
                output_key=returned, tokens_cache_read=cache_read, tokens_cache_write=cache_write,
                tokens_reasoning=reasoning)
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
    p50_ms: float | None = None
    p95_ms: float | None = None
    failure_modes: dict[str, int] = field(default_factory=dict)  # fingerprint -> count

    @property
    def failure_rate(self) -> float:
        return self.failures / self.calls if self.calls else 0.0

    def set_durations(self, durations: Iterable[float]) -> None:
        """The median and p95 of the calls' durations (nearest rank)."""
        ordered = sorted(durations)
        if ordered:
            self.p50_ms = anomaly.nearest_rank(ordered, 50)
            self.p95_ms = anomaly.nearest_rank(ordered, 95)


class LoopEnd(Protocol):
    """The call a loop starts or ends with: a Step, or a call of a long session's stream."""

    @property
    def event_id(self) -> str: ...
    @property
    def timestamp(self) -> str: ...
    @property
    def order(self) -> tuple[str, int]: ...


@dataclass
class Loop:
    """A run of identical tool calls in a row: its first and last call (steps, or the calls
    of a long session's stream) and what the run adds up to."""

    tool_name: str
    tool_input: str | None
    first: LoopEnd
    last: LoopEnd
    count: int
    failures: int
    tool_ms: float  # the calls' durations added up
    identical_outputs: bool  # every call returned the same thing (and returned something)


class _Run:
    """The run of identical calls being built by LoopFinder."""

    __slots__ = ("key", "first", "last", "count", "failures", "tool_ms", "same")

    def __init__(self, call) -> None:
        self.start(call)

    def start(self, call) -> None:
        """Begin the run again at `call` (reused for the many runs that are no loop)."""
        self.key, self.first, self.last = call.tool_key, call, call
        self.count, self.failures = 1, int(call.is_error)
        self.tool_ms = 0.0 + (call.duration_ms or 0.0)
        # Whether every call returned the same thing: looked at once a second call joins, so
        # that a call that starts no run is never asked what it returned (a long session's
        # calls work that out from their JSON).
        self.same: bool | None = None

    def add(self, call) -> None:
        self.last = call
        self.count += 1
        self.failures += call.is_error
        self.tool_ms += call.duration_ms or 0.0
        first = self.first.output_key
        if self.same is None:
            self.same = first is not None
        self.same = self.same and call.output_key == first

    def loop(self) -> Loop:
        return Loop(self.first.tool_name, self.first.tool_input, self.first, self.last, self.count,
                    self.failures, self.tool_ms, bool(self.same))


class LoopFinder:
    """Runs of LOOP_MIN_REPEATS or more identical tool calls (same name and input) in a row,
    from the session's tool calls fed in order (`feed`, then `finish`).

    "In a row" is within the sequence of tool calls: an LLM call or decision between two
    identical calls does not break the run, and neither does a failed call of another tool or
    input (a failed attempt inside the loop: one more error must never make the loop look
    shorter); a successful other call does. Failed calls passed over so are looked at again
    for runs of their own once the run they interrupted ends. A run is kept as its first and
    last call and running totals, so a long session's stream of calls is not held.
    """

    def __init__(self) -> None:
        self.loops: list[Loop] = []
        self._run: _Run | None = None
        self._held: list = []  # failed calls of another kind inside the current run
        self._pending: deque = deque()

    def feed(self, call) -> None:
        run = self._run
        if not self._held:  # the common cases, without the queue
            if run is None:
                self._run = _Run(call)
                return
            if call.tool_key == run.key:
                run.add(call)
                return
            if not call.is_error:
                if run.count < LOOP_MIN_REPEATS:
                    run.start(call)
                else:
                    self._close()
                    self._run = _Run(call)
                return
        self._pending.append(call)
        self._drain()

    def finish(self) -> list[Loop]:
        while self._held:  # the calls passed over form runs of their own
            self._close()
            self._pending, self._held = deque(self._held), []
            self._drain()
        self._close()
        return self.loops

    def _drain(self) -> None:
        pending = self._pending
        while pending:
            call = pending.popleft()
            if self._run is not None and call.tool_key != self._run.key:
                if call.is_error:
                    self._held.append(call)
                    continue
                self._close()
                if self._held:
                    pending.appendleft(call)
                    pending.extendleft(reversed(self._held))
                    self._held = []
                    continue
            if self._run is None:
                self._run = _Run(call)
            else:
                self._run.add(call)

    def _close(self) -> None:
        if self._run is not None and self._run.count >= LOOP_MIN_REPEATS:
            self._keep(self._run.loop())
        self._run = None

    def _keep(self, loop: Loop) -> None:
        self.loops.append(loop)


def find_loops(calls: Iterable) -> list[Loop]:
    """The loops among these tool calls (LoopFinder)."""
    finder = LoopFinder()
    for call in calls:
        finder.feed(call)
    return finder.finish()


@dataclass
class SlowKind:
    """Slow successful events of one kind (event type and tool)."""

    event_type: str
    tool_name: str | None
    threshold_ms: float
    source: str  # baseline or session
    median_ms: float
    p95_ms: float | None
    count: int
    max_ms: float
    event_ids: list[str]  # the first SLOW_IDS of them


SLOW_IDS = 10


def sort_slow(slow: list[SlowKind]) -> list[SlowKind]:
    """Most slow events first, then by kind."""
    return sorted(slow, key=lambda k: (-k.count, k.event_type, k.tool_name or ""))


@dataclass
class SessionAnalysis:
    session: dict
    steps: list[Step]  # every event in order; for a long session the first and last events
    step_count: int  # the session's events
    errors: list[Step]  # the failed body events in order (a long session's first ERRORS_ANALYSED)
    successes_before: list[int]  # per error: successful body events since the error before it (a long
    # session counts up to 4: a cascade only asks whether there were more than 3)
    groups: list[ErrorGroup]
    tools: dict[str, ToolStats]
    loops: list[Loop]
    success_loops: list[Loop]
    slow: list[SlowKind]
    baseline: anomaly.Baseline
    cost: dict
    usage: list[tuple]  # (event_type, model, is_error, events, tokens_in, tokens_out) of body events
    failed: bool
    duration_ms: float | None
    body_events: int
    error_events: int
    processing_ms: float
    last_success: tuple[str, int] | None  # order of the last successful body event
    # (value, is_error) of the next body event with a tool (attr "tool_name") or a model
    # ("model") after a failed step, or None.
    next_call: Callable[[Step, str], tuple[str, bool] | None]
    long: bool = False  # analysed from aggregates (services/triage/long.py): its lists are bounded
    memo: dict = field(default_factory=dict)  # what the rules work out once per analysis

    @property
    def counts(self) -> SessionEventCounts:
        """The session's event counts and error event rate (services/rates.py)."""
        return SessionEventCounts(
            event_count=self.session["event_count"], error_count=self.session["error_count"],
            body_events=self.body_events, error_events=self.error_events)

    @property
    def error_rate(self) -> float:
        """Share (0-1) of the body events (non-lifecycle) that are errors, unrounded: the
        health score's term. Reports show `counts.error_event_rate` instead."""
        return self.error_events / self.body_events if self.body_events else 0.0

    def elapsed_ms(self, step: Step) -> float | None:
        elapsed = ms_between(self.session["started_at"], step.timestamp)
        return None if elapsed is None else round(elapsed, 3)
