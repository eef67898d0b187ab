"""Hand-made sessions for the triage and postmortem tests, stored through the real ingest
service. Every number the tests expect is computed by hand from these definitions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from obsctl.services.ingest import ingest_events
from obsctl.services.pricing import Pricer
from obsctl.timeutil import format_ts

# USD per million tokens; "in-house-llm" is deliberately left unpriced.
PRICES = {"gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10.0}}
T0 = datetime(2026, 3, 10, 12, 0, 0, tzinfo=UTC)


def ts(seconds: float, base: datetime = T0) -> str:
    return format_ts(base + timedelta(seconds=seconds))


def write_prices(directory: Path) -> Path:
    path = Path(directory) / "prices.json"
    path.write_text(json.dumps(PRICES))
    return path


def pricer(directory: Path) -> Pricer:
    return Pricer(write_prices(directory))


def rate_limit_cascade(db, sid: str = "rl") -> None:
    """An LLM call, three rate limits, a web_search timeout, the agent giving up.

    8 events, 6 of them work (not lifecycle), 5 errors; status error."""
    e = {"session_id": sid}
    ingest_events(db, [
        {**e, "event_type": "session_start", "agent_name": "researcher", "timestamp": ts(0),
         "event_id": f"{sid}-0"},
        {**e, "event_type": "llm_call", "model": "gpt-4o", "tokens_in": 1200, "tokens_out": 300,
         "duration_ms": 900, "timestamp": ts(1), "event_id": f"{sid}-1"},
        {**e, "event_type": "rate_limit", "model": "gpt-4o", "timestamp": ts(2), "event_id": f"{sid}-2",
         "output_data": {"error": "Rate limit exceeded: retry after 2s (request req_8f3a2b)"}},
        {**e, "event_type": "rate_limit", "model": "gpt-4o", "timestamp": ts(4), "event_id": f"{sid}-3",
         "output_data": {"error": "Rate limit exceeded: retry after 4s (request req_91cc07)"}},
        {**e, "event_type": "rate_limit", "model": "gpt-4o", "timestamp": ts(8), "event_id": f"{sid}-4",
         "output_data": {"error": "Rate limit exceeded: retry after 8s (request req_a7d2e1)"}},
        {**e, "event_type": "tool_call", "duration_ms": 30000, "timestamp": ts(40), "event_id": f"{sid}-5",
         "tool_call": {"name": "web_search", "input": {"q": "quarterly revenue"},
                       "error": "web_search timed out after 30000 ms"}},
        {**e, "event_type": "error", "timestamp": ts(41), "event_id": f"{sid}-6",
         "output_data": {"error": "Agent gave up after 3 retries"}},
        {**e, "event_type": "session_end", "status": "error", "timestamp": ts(42), "event_id": f"{sid}-7"},
    ])


def runaway_loop(db, sid: str = "loop", repeats: int = 7) -> None:
    """`repeats` identical fetch_url calls, a decision between each pair (which does not
    break the run), then a normal end. No errors."""
    e = {"session_id": sid}
    events = [{**e, "event_type": "session_start", "agent_name": "crawler", "timestamp": ts(0)},
              {**e, "event_type": "llm_call", "model": "gpt-4o", "tokens_in": 100, "tokens_out": 20,
               "timestamp": ts(1)}]
    for i in range(repeats):
        events.append({**e, "event_type": "tool_call", "duration_ms": 200, "timestamp": ts(2 + 2 * i),
                       "tool_call": {"name": "fetch_url", "input": {"url": "https://example.com/p"},
                                     "output": {"status": 200}}})
        events.append({**e, "event_type": "decision", "timestamp": ts(3 + 2 * i),
                       "decision_trace": {"reasoning": "the page did not load fully, fetch it again"}})
    events.append({**e, "event_type": "session_end", "status": "completed", "timestamp": ts(60)})
    ingest_events(db, events)


def steady_session(db, sid: str, agent: str, start: datetime, tokens_in: int = 1000,
                   tokens_out: int = 200) -> None:
    """session_start, one gpt-4o call, session_end 10 s later (3 events, no errors)."""
    e = {"session_id": sid}
    ingest_events(db, [
        {**e, "event_type": "session_start", "agent_name": agent, "timestamp": format_ts(start)},
        {**e, "event_type": "llm_call", "model": "gpt-4o", "tokens_in": tokens_in,
         "tokens_out": tokens_out, "duration_ms": 800, "timestamp": format_ts(start + timedelta(seconds=5))},
        {**e, "event_type": "session_end", "status": "completed",
         "timestamp": format_ts(start + timedelta(seconds=10))},
    ])


def steady_baseline(db, agent: str = "summarizer") -> None:
    """Four steady sessions in the 7 days before T0 (1,200 tokens each), plus sessions the
    baseline must ignore: one 8 days before, one of another agent, one after T0."""
    for day in (1, 2, 3, 4):
        steady_session(db, f"base-{day}", agent, T0 - timedelta(days=day))
    steady_session(db, "too-old", agent, T0 - timedelta(days=8), tokens_in=90_000)
    steady_session(db, "other-agent", "someone-else", T0 - timedelta(days=1), tokens_in=90_000)
    steady_session(db, "later", agent, T0 + timedelta(hours=1), tokens_in=90_000)


def token_spike(db, sid: str = "spike") -> None:
    """24,000 tokens (20x the steady baseline's 1,200), everything else as usual."""
    steady_baseline(db)
    steady_session(db, sid, "summarizer", T0, tokens_in=20_000, tokens_out=4_000)


def clean_session(db, sid: str = "clean") -> None:
    """Exactly like the steady baseline."""
    steady_baseline(db)
    steady_session(db, sid, "summarizer", T0)


def slow_tool(db, sid: str = "slow") -> None:
    """A baseline of 3 sessions (100 s each) with 10 db_query calls of 100 ms (30 samples),
    then a 50 s session whose db_query calls take 5 s, 100 ms, 5 s, 100 ms and 5 s."""
    for day in (1, 2, 3):
        start = T0 - timedelta(days=day)
        events = [{"session_id": f"q-{day}", "event_type": "session_start", "agent_name": "analyst",
                   "timestamp": format_ts(start)}]
        for i in range(10):
            events.append({"session_id": f"q-{day}", "event_type": "tool_call", "duration_ms": 100,
                           "timestamp": format_ts(start + timedelta(seconds=10 * (i + 1))),
                           "tool_call": {"name": "db_query", "input": {"n": i}}})
        ingest_events(db, events)
    events = [{"session_id": sid, "event_type": "session_start", "agent_name": "analyst",
               "timestamp": ts(0)}]
    for i, duration in enumerate([5000, 100, 5000, 100, 5000]):
        events.append({"session_id": sid, "event_type": "tool_call", "duration_ms": duration,
                       "timestamp": ts(10 * (i + 1)), "tool_call": {"name": "db_query", "input": {"n": i}}})
    ingest_events(db, events)


def expensive_model_switch(db, sid: str = "pricey") -> None:
    """research-agent usually runs gpt-4o-mini (four steady sessions, 1,000 tokens in and 200
    out: $0.00027 each at the prices below); this session called o1-preview with 400,000 tokens
    in and 20,000 out ($7.20) and gpt-4o-mini once ($0.00027)."""
    for n in range(4):
        ingest_events(db, [
            {"session_id": f"cheap-{n}", "event_type": "session_start", "agent_name": "research-agent",
             "timestamp": ts(0, T0 - timedelta(days=n + 1)), "event_id": f"cheap-{n}-0"},
            {"session_id": f"cheap-{n}", "event_type": "llm_call", "model": "gpt-4o-mini", "tokens_in": 1000,
             "tokens_out": 200, "duration_ms": 800, "timestamp": ts(1, T0 - timedelta(days=n + 1)),
             "event_id": f"cheap-{n}-1"},
            {"session_id": f"cheap-{n}", "event_type": "session_end", "status": "completed",
             "timestamp": ts(2, T0 - timedelta(days=n + 1)), "event_id": f"cheap-{n}-2"},
        ])
    ingest_events(db, [
        {"session_id": sid, "event_type": "session_start", "agent_name": "research-agent", "timestamp": ts(0),
         "event_id": f"{sid}-0"},
        {"session_id": sid, "event_type": "llm_call", "model": "gpt-4o-mini", "tokens_in": 1000,
         "tokens_out": 200, "duration_ms": 800, "timestamp": ts(1), "event_id": f"{sid}-1"},
        {"session_id": sid, "event_type": "llm_call", "model": "o1-preview", "tokens_in": 400_000,
         "tokens_out": 20_000, "duration_ms": 900, "timestamp": ts(2), "event_id": f"{sid}-2"},
        {"session_id": sid, "event_type": "session_end", "status": "completed", "timestamp": ts(3),
         "event_id": f"{sid}-3"},
    ])


def gave_up_after_a_loop(db, sid: str = "maxiter") -> None:
    """An LLM call, 8 identical run_tests calls with identical outputs (3 tests failing, not an
    error event), then the agent stops: `error` "Max iterations (10) reached"; status error."""
    e = {"session_id": sid}
    events = [{**e, "event_type": "session_start", "agent_name": "coder", "timestamp": ts(0), "event_id": f"{sid}-s"},
              {**e, "event_type": "llm_call", "model": "gpt-4o", "tokens_in": 500, "tokens_out": 100,
               "timestamp": ts(1), "event_id": f"{sid}-l"}]
    for i in range(8):
        events.append({**e, "event_type": "tool_call", "duration_ms": 1500, "timestamp": ts(2 + i),
                       "event_id": f"{sid}-t{i}",
                       "tool_call": {"name": "run_tests", "input": {"path": "tests/"},
                                     "output": {"passed": 41, "failed": 3}}})
    events += [{**e, "event_type": "error", "timestamp": ts(20), "event_id": f"{sid}-e",
                "output_data": {"error": "Max iterations (10) reached"}},
               {**e, "event_type": "session_end", "status": "error", "timestamp": ts(21), "event_id": f"{sid}-end"}]
    ingest_events(db, events)
