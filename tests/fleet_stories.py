"""A seeded generator of a realistic 3-day fleet of 4 agents, with six stories and their
ground truth (what an on-call engineer should be told about each).

Every session is built from the seed alone: the same seed gives the same events. Healthy
sessions vary (LLM calls of 900-1,200 ms, 1,400-1,600 tokens in, tool inputs that differ) within
what a healthy agent does; the stories are laid on top of them:

1. outage: web_search answers HTTP 503 from 19:56 to 20:39 on the third day: 9 failures in 5
   sessions of 3 agents;
2. loop: a coder session calls run_tests 8 times with the same input, gets the same output every
   time and gives up ("Max iterations (10) reached");
3. model change: planner moves from claude-3-haiku to claude-3-opus at 10:00 on the third day:
   LLM calls about 8x slower, sessions 60x dearer;
4. cost blow-up: one research-agent session runs o1-preview and costs $7.20;
5. rate-limit cascade: 3 sessions of support-bot hit gpt-4o-mini's 429 within 90 s;
6. healthy: every other session, about which nothing should be said.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from obsctl.timeutil import format_ts

T0 = datetime(2026, 3, 8, tzinfo=UTC)
DAYS = 3
# USD per million tokens.
PRICES = {"claude-3-5-sonnet": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
          "gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},
          "claude-3-haiku": {"input_per_mtok": 0.25, "output_per_mtok": 1.25},
          "claude-3-opus": {"input_per_mtok": 15.0, "output_per_mtok": 75.0},
          "gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10.0},
          "o1-preview": {"input_per_mtok": 15.0, "output_per_mtok": 60.0}}
AGENTS = {"research-agent": ("claude-3-5-sonnet", "web_search"), "support-bot": ("gpt-4o-mini", "crm_lookup"),
          "planner": ("claude-3-haiku", "calendar"), "coder": ("gpt-4o", "read_file")}
CHANGE_AT = T0 + timedelta(days=2, hours=10)
OUTAGE = (T0 + timedelta(days=2, hours=19, minutes=56), T0 + timedelta(days=2, hours=20, minutes=39))
CASCADE_AT = T0 + timedelta(days=1, hours=21)


@dataclass
class Fleet:
    events: list[dict] = field(default_factory=list)
    healthy: list[str] = field(default_factory=list)
    outage: list[str] = field(default_factory=list)  # the sessions web_search failed in
    cascade: list[str] = field(default_factory=list)
    loop: str = "coder-loop"
    expensive: str = "research-o1"
    after_change: list[str] = field(default_factory=list)  # planner's sessions on claude-3-opus


def ts(at: datetime) -> str:
    return format_ts(at)


def write_prices(directory: Path) -> Path:
    path = Path(directory) / "fleet-prices.json"
    path.write_text(json.dumps(PRICES))
    return path


class _Builder:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.fleet = Fleet()

    def add(self, sid: str, agent: str, start: datetime, body: list[dict], status: str = "completed") -> None:
        events = [{"session_id": sid, "event_type": "session_start", "agent_name": agent, "timestamp": ts(start),
                   "event_id": f"{sid}-start"}]
        for n, event in enumerate(body):
            events.append({"session_id": sid, "event_id": f"{sid}-{n}", **event})
        last = max(e["timestamp"] for e in events)
        end = max(start + timedelta(minutes=5), datetime.fromisoformat(last) + timedelta(seconds=30))
        events.append({"session_id": sid, "event_type": "session_end", "status": status, "timestamp": ts(end),
                       "event_id": f"{sid}-end"})
        self.fleet.events += events

    def llm(self, at: datetime, model: str, ms: float | None = None, tokens_in: int | None = None,
            tokens_out: int | None = None) -> dict:
        rng = self.rng
        return {"event_type": "llm_call", "model": model, "timestamp": ts(at),
                "tokens_in": tokens_in if tokens_in is not None else rng.randint(1400, 1600),
                "tokens_out": tokens_out if tokens_out is not None else rng.randint(300, 400),
                "duration_ms": ms if ms is not None else round(rng.uniform(900, 1200), 1),
                "input_data": {"prompt": f"step at {ts(at)}"}, "output_data": {"text": "ok"}}

    def tool(self, at: datetime, name: str, query: str, output: str | None = None, error: str | None = None,
             ms: float | None = None) -> dict:
        call = {"name": name, "input": {"q": query}}
        call.update({"error": error} if error else {"output": output or f"{name} result for {query}"})
        return {"event_type": "tool_call", "timestamp": ts(at), "tool_call": call,
                "duration_ms": ms if ms is not None else round(self.rng.uniform(150, 300), 1)}

    def healthy(self, sid: str, agent: str, start: datetime, model: str | None = None) -> None:
        usual, tool = AGENTS[agent]
        model = model or usual
        at = [start + timedelta(seconds=s) for s in (20, 50, 80, 110, 140)]
        opus = model == "claude-3-opus"
        body = [self.llm(at[0], model, round(self.rng.uniform(8000, 9200), 1) if opus else None),
                self.tool(at[1], tool, f"{sid} first"),
                self.llm(at[2], model, round(self.rng.uniform(8000, 9200), 1) if opus else None),
                self.tool(at[3], tool, f"{sid} second"),
                self.llm(at[4], model, round(self.rng.uniform(8000, 9200), 1) if opus else None)]
        self.add(sid, agent, start, body)


def generate(seed: int = 7) -> Fleet:
    """The fleet's events and its ground truth."""
    b = _Builder(seed)
    fleet = b.fleet
    # Healthy sessions: every agent every 4 hours, at its own offset, for 3 days.
    for k in range(DAYS * 6):
        for n, agent in enumerate(AGENTS):
            start = T0 + timedelta(hours=4 * k, minutes=17 * n + b.rng.randint(0, 10))
            sid = f"{agent}-{k:02d}"
            if agent == "planner" and start >= CHANGE_AT:
                b.healthy(sid, agent, start, "claude-3-opus")
                fleet.after_change.append(sid)
            else:
                b.healthy(sid, agent, start)
                fleet.healthy.append(sid)
    _outage(b)
    _loop(b)
    _cost(b)
    _cascade(b)
    return fleet


def _outage(b: _Builder) -> None:
    """9 failures of web_search in 5 sessions of 3 agents, 19:56-20:39 of the third day."""
    day3 = T0 + timedelta(days=2, hours=19)
    plan = [("ws-1", "research-agent", 55, (56, 58)), ("ws-2", "research-agent", 60, (61, 70)),
            ("ws-3", "support-bot", 62, (64,)), ("ws-4", "support-bot", 75, (76, 80)),
            ("ws-5", "planner", 90, (95, 99))]
    failure = 0
    for sid, agent, start, minutes in plan:
        model = "claude-3-opus" if agent == "planner" else AGENTS[agent][0]
        body = [b.llm(day3 + timedelta(minutes=start, seconds=20), model,
                      8600.0 if model == "claude-3-opus" else None)]
        for minute in minutes:
            failure += 1
            body.append(b.tool(day3 + timedelta(minutes=minute), "web_search", f"outage {failure}",
                               error=f"HTTP 503 Service Unavailable (request req_{failure:04x}a9f)", ms=120.0))
        b.add(sid, agent, day3 + timedelta(minutes=start), body, status="error")
        b.fleet.outage.append(sid)


def _loop(b: _Builder) -> None:
    """8 identical run_tests calls with identical outputs, then the agent gives up."""
    start = T0 + timedelta(days=1, hours=14, minutes=3)
    body = [b.llm(start + timedelta(seconds=10), "gpt-4o")]
    for n in range(8):
        at = start + timedelta(seconds=30 + 20 * n)
        body.append(b.llm(at, "gpt-4o"))
        body.append(b.tool(at + timedelta(seconds=5), "run_tests", "tests/test_parse.py",
                           output="FAILED tests/test_parse.py::test_dates - AssertionError", ms=800.0))
    body.append({"event_type": "error", "timestamp": ts(start + timedelta(seconds=200)),
                 "output_data": {"error": "Max iterations (10) reached"}})
    b.add(b.fleet.loop, "coder", start, body, status="error")


def _cost(b: _Builder) -> None:
    """One research-agent session on o1-preview: 400,000 x $15 + 20,000 x $60 per million = $7.20."""
    start = T0 + timedelta(days=1, hours=9, minutes=2)
    body = [b.llm(start + timedelta(seconds=20), "o1-preview", 30000.0, 400_000, 20_000),
            b.tool(start + timedelta(seconds=60), "web_search", "quarterly report")]
    b.add(b.fleet.expensive, "research-agent", start, body)


def _cascade(b: _Builder) -> None:
    """3 sessions of support-bot get gpt-4o-mini's 429 at 0, 40 and 90 s past 21:00 of day 2."""
    for n, seconds in enumerate((0, 40, 90)):
        sid = f"rl-{n + 1}"
        start = CASCADE_AT - timedelta(seconds=30)
        body = [b.llm(start + timedelta(seconds=10), "gpt-4o-mini"),
                {"event_type": "rate_limit", "model": "gpt-4o-mini",
                 "timestamp": ts(CASCADE_AT + timedelta(seconds=seconds)),
                 "output_data": {"error": f"429 Too Many Requests: retry after {n + 5}s"}}]
        b.add(sid, "support-bot", start, body, status="error")
        b.fleet.cascade.append(sid)
