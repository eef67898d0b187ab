"""The postmortem timeline: every event in order, with a one-line description.

A session of more than TIMELINE_EVENTS events (an agent that ran for days) gets a bounded
timeline: its first and last TIMELINE_ENDS events and, between them, its first
TIMELINE_ERRORS errors; each entry says its place in the session (`number`), and the report
says how many entries were left out (`timeline_left_out`)."""

from __future__ import annotations

import orjson

from obsctl.services.sessions.fields import excerpt, main_text, reasoning_text
from obsctl.services.triage.facts import ENDS_READ, ERRORS_PLACED, SessionAnalysis, Step

DESCRIPTION_CHARS = 140
TIMELINE_EVENTS = 10_000
TIMELINE_ENDS = ENDS_READ  # what a long session's analysis reads
TIMELINE_ERRORS = ERRORS_PLACED


def describe(step: Step, session: dict) -> str:
    """One line saying what the event was: a failure and its message, a tool call and its
    input, a model call and its tokens, a decision and its reasoning."""
    if step.event_type == "session_start":
        return f"Session started (agent {session['agent_name']})"
    if step.event_type == "session_end":
        return "Session ended"
    if step.is_error:
        subject = step.tool_name or step.model
        head = f"{subject} failed" if subject else step.event_type
        kind = "" if step.kind == "other" else f" ({step.kind})"
        return excerpt(f"{head}{kind}: {step.message or step.event_type}", DESCRIPTION_CHARS)
    if step.tool_name is not None:
        return excerpt(f"{step.tool_name}({step.tool_input or ''})", DESCRIPTION_CHARS)
    if step.model is not None:
        return f"{step.model}: {step.tokens_in or 0:,} tokens in, {step.tokens_out or 0:,} out"
    if step.decision_trace is not None:
        reasoning = reasoning_text(orjson.loads(step.decision_trace))
        if reasoning:
            return excerpt(f"{step.event_type}: {reasoning}", DESCRIPTION_CHARS)
    if step.output_data is not None:
        text = main_text(orjson.loads(step.output_data))
        if text:
            return excerpt(f"{step.event_type}: {text}", DESCRIPTION_CHARS)
    return step.event_type


def timeline(a: SessionAnalysis) -> list[dict]:
    """Chronological entries: number (the event's place in the session, from 1), timestamp,
    elapsed_ms from the session start, event_type, description, duration_ms, is_error, plus the
    event id, tool, model, tokens and whether the event was slow (bounded: see the module text)."""
    return [_entry(a, step) for step in shown_steps(a)]


def shown_steps(a: SessionAnalysis) -> list[Step]:
    """The steps the timeline shows: all of them, or the bounded selection of a long session
    (whose analysis holds only its first and last TIMELINE_ENDS events and its errors)."""
    if a.step_count <= TIMELINE_EVENTS and len(a.steps) == a.step_count:
        return a.steps
    tail_start = a.step_count - TIMELINE_ENDS
    middle = [s for s in a.errors if TIMELINE_ENDS <= s.index < tail_start][:TIMELINE_ERRORS]
    return [*(s for s in a.steps if s.index < TIMELINE_ENDS), *middle,
            *(s for s in a.steps if s.index >= max(tail_start, TIMELINE_ENDS))]


def _entry(a: SessionAnalysis, step: Step) -> dict:
    tokens = (step.tokens_in or 0) + (step.tokens_out or 0)
    return {
        "number": step.index + 1,
        "timestamp": step.timestamp,
        "elapsed_ms": a.elapsed_ms(step),
        "event_type": step.event_type,
        "description": describe(step, a.session),
        "duration_ms": step.duration_ms,
        "is_error": step.is_error,
        "event_id": step.event_id,
        "tool_name": step.tool_name,
        "model": step.model,
        "tokens": tokens,
        "slow": step.slow,
    }
