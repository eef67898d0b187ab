"""What triage and postmortems suggest: per error kind (services/error_kinds.KIND_SUGGESTIONS),
told by what the session already does (an agent that already backs off is not told to back
off, one that already falls back is not told to add a fallback), and per finding (loops, slow
steps, baseline metrics, configuration changes)."""

from __future__ import annotations

import re

from obsctl.services.error_kinds import KIND_SUGGESTIONS
from obsctl.services.triage.facts import SessionAnalysis
from obsctl.timeutil import parse_ts

# Errors that are the agent stopping itself, not a failure of their own.
TERMINAL = re.compile(r"max(imum)?[ _-]?(iterations|steps|turns|retries)|gave up|giving up|step limit|"
                      r"recursion limit|too many (steps|iterations|turns)", re.IGNORECASE)

METRIC_SUGGESTIONS = {
    "total_tokens": "Look for oversized prompts or retrieved context, loops, and retries that resend "
                    "the whole context; give the agent a per-run token budget.",
    "duration_ms": "Find the slowest steps in the timeline; set per-step timeouts and an overall "
                   "deadline for the run.",
    "event_count": "The run took many more steps than usual: look for loops and retries, and cap "
                   "the number of steps per run.",
    "error_count": "Far more errors than usual: check the dependencies this agent calls for an "
                   "outage or a recent change.",
    "cost_usd": "Check which models were called and how many tokens they used; set a cost budget "
                "alert for this agent.",
}
LOOP_SUGGESTION = ("Stop the agent after a few identical calls (same tool, same input), feed the "
                   "tool's result back into the prompt so it can change course, and cap the steps "
                   "per run.")
SLOW_SUGGESTION = ("Check what made these calls slow (input size, dependency health); set timeouts, "
                   "and consider caching or a faster tool or model for this step.")
CHANGE_SUGGESTION = ("If the change was intended, acknowledge it (obsctl changes ack {id}) and the "
                     "new configuration becomes this agent's baseline; if not, roll it back.")


def backoff_waits(a: SessionAnalysis) -> list[float] | None:
    """The waits (seconds) between the session's rate-limited calls when they already grow, as
    a backoff does (3+ rate limits, each wait at least the one before, the last 1.5x the first);
    else None. Worked out once per analysis (a long session has thousands of rate limits)."""
    if "backoff_waits" not in a.memo:
        a.memo["backoff_waits"] = _backoff_waits(a)
    return a.memo["backoff_waits"]


def _backoff_waits(a: SessionAnalysis) -> list[float] | None:
    times = [parse_ts(s.timestamp) for s in a.errors if s.kind == "rate_limit"]
    waits = [(b - t).total_seconds() for t, b in zip(times, times[1:])]
    if len(waits) < 2 or waits[0] <= 0:
        return None
    growing = all(later >= earlier for earlier, later in zip(waits, waits[1:]))
    return waits if growing and waits[-1] >= 1.5 * waits[0] else None


WAITS_SHOWN = 10
FALLBACK_KINDS = frozenset({"rate_limit", "timeout", "server", "network"})
FALLBACKS_SHOWN = 3


def fallbacks(a: SessionAnalysis, kind: str) -> list[tuple[str, str]]:
    """The first FALLBACKS_SHOWN (failed, used instead) pairs, in order of first use: after an
    error of this kind in a tool (or a model), the agent's next call of the same sort (tool
    call, model call) went to another tool (model) and succeeded. Worked out once per kind
    and analysis."""
    key = f"fallbacks:{kind}"
    if key not in a.memo:
        a.memo[key] = _fallbacks(a, kind)
    return a.memo[key]


def _fallbacks(a: SessionAnalysis, kind: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for step in a.errors:
        if step.kind != kind:
            continue
        attr = "tool_name" if step.tool_name else "model"
        failed = getattr(step, attr)
        if failed is None:
            continue
        following = a.next_call(step, attr)
        if following is not None and not following[1] and following[0] != failed:
            pair = (failed, following[0])
            if pair not in pairs:
                pairs.append(pair)
                if len(pairs) == FALLBACKS_SHOWN:
                    break
    return pairs


def suggestion_for(a: SessionAnalysis, kind: str) -> str:
    """The suggestion for an error kind, told by what the session already does: an agent that
    already backs off is not told to back off, one that already falls back to another tool or
    model is not told to add a fallback."""
    if kind == "rate_limit":
        waits = backoff_waits(a)
        if waits:
            shown = "/".join(f"{w:g}" for w in waits[:WAITS_SHOWN]) + ("/..." if len(waits) > WAITS_SHOWN else "")
            return (f"The agent already backs off ({shown} s between rate-limited calls): cap its "
                    f"concurrency, spread the work over time, or ask for a higher quota.")
    if kind in FALLBACK_KINDS:
        pairs = fallbacks(a, kind)
        if pairs:
            shown = ", ".join(f"{failed} -> {instead}" for failed, instead in pairs)
            first = pairs[0][0]
            return (f"The agent already falls back when this fails ({shown}): add a circuit breaker "
                    f"so it goes straight to the fallback while {first} keeps failing, and alert on "
                    f"how often the fallback is used.")
    return KIND_SUGGESTIONS[kind]


def gave_up(a: SessionAnalysis) -> bool:
    """The session's errors are only the agent stopping itself (max iterations, gave up, step
    limit): a symptom whose cause is what ran before it."""
    return bool(a.errors) and all(s.message and TERMINAL.search(s.message) for s in a.errors)
