"""Write the bundled demo sample: a dozen sessions over three agents.

Successes, slow calls, tool failures, a runaway loop and a rate-limit cascade, so every
obsctl view has something to show. Deterministic; `--now` places the last event near the
current time (what `make demo` does so time windows such as alerts' include the data).

    python examples/generate_demo.py > examples/demo-events.jsonl
    python examples/generate_demo.py --now > .demo/events.jsonl
"""

from __future__ import annotations

import json
import random
import sys
from datetime import UTC, datetime, timedelta

BASE = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class Session:
    def __init__(self, out, sid, agent, start, meta, rng):
        self.out, self.sid, self.agent, self.t, self.rng, self.n = out, sid, agent, start, rng, 0
        self.emit("session_start", agent_name=agent, metadata=meta)

    def emit(self, event_type, gap_ms=0, **fields):
        """One event starting `gap_ms` after the previous one finished. The timestamp is the
        start (as for OpenTelemetry spans) and the clock moves on by the event's duration, so
        steps never overlap and no step outlasts its session."""
        self.t += timedelta(milliseconds=gap_ms)
        self.n += 1
        ev = {"event_id": f"{self.sid}-{self.n:03d}", "session_id": self.sid, "event_type": event_type,
              "timestamp": self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"}
        ev.update(fields)
        self.out.append(ev)
        self.t += timedelta(milliseconds=fields.get("duration_ms") or 0)

    def llm(self, model, prompt, answer, tin, tout, ms, gap=300):
        self.emit("llm_call", gap, model=model, tokens_in=tin, tokens_out=tout, duration_ms=ms,
                  input_data={"prompt": prompt}, output_data={"text": answer})

    def tool(self, name, args, result=None, error=None, ms=120, gap=200):
        call = {"name": name, "input": args}
        if error:
            call["error"] = error
            self.emit("tool_error", gap, tool_call=call, duration_ms=ms, output_data={"error": error})
        else:
            call["output"] = result
            self.emit("tool_call", gap, tool_call=call, duration_ms=ms)

    def decide(self, reasoning, choice, gap=100):
        self.emit("decision", gap, decision_trace={"reasoning": reasoning, "choice": choice},
                  duration_ms=self.rng.randint(5, 40))

    def end(self, status="completed", gap=200):
        self.emit("session_end", gap, status=status)


def build() -> list[dict]:
    rng = random.Random(7)
    out: list[dict] = []
    at = lambda h: BASE + timedelta(hours=h)  # noqa: E731

    # support-bot: two clean tickets, one slow model call, one CRM outage it recovers from.
    for i, (h, q) in enumerate([(0, "Where is my order #4411?"), (3, "How do I reset my password?")]):
        s = Session(out, f"support-{i + 1:03d}", "support-bot", at(h), {"channel": "chat", "customer_tier": "gold"}, rng)
        s.llm("gpt-4o-mini", q, "Let me look that up.", 412, 38, 620)
        s.decide("Customer asks about an order; the CRM has shipping status.", "crm_lookup")
        s.tool("crm_lookup", {"order": "4411"}, {"status": "shipped", "eta": "2026-11-22"}, ms=180)
        s.llm("gpt-4o-mini", "Draft a reply with the shipping status", "Your order shipped and arrives Saturday.", 690, 74, 840)
        s.end()
    s = Session(out, "support-003", "support-bot", at(6), {"channel": "email"}, rng)
    s.llm("gpt-4o", "Summarise this 6-page complaint and propose a remedy", "Summary: ...", 7420, 910, 14850)
    s.decide("Long complaint; escalate with a refund offer.", "draft_refund")
    s.llm("gpt-4o", "Draft the refund email", "Dear customer, ...", 1210, 430, 9120)
    s.end()
    s = Session(out, "support-004", "support-bot", at(9), {"channel": "chat"}, rng)
    s.llm("gpt-4o-mini", "Can I change my delivery address?", "Checking your order.", 380, 30, 540)
    s.tool("crm_lookup", {"order": "5120"}, error="CRM returned HTTP 500: upstream unavailable", ms=2040)
    s.decide("CRM failed once; retry after a short wait.", "retry")
    s.tool("crm_lookup", {"order": "5120"}, {"status": "processing"}, ms=210, gap=1500)
    s.llm("gpt-4o-mini", "Reply: address can be changed", "Yes, you can change it until it ships.", 610, 52, 700)
    s.end()

    # research-agent: a clean report, a rate-limit cascade that ends in failure, a loop, slow search.
    s = Session(out, "research-001", "research-agent", at(1), {"topic": "battery recycling"}, rng)
    s.decide("Plan: search, read two sources, summarise.", "web_search")
    s.tool("web_search", {"q": "lithium battery recycling rates 2026"}, {"results": 10}, ms=840)
    s.tool("fetch_url", {"url": "https://example.org/report"}, {"bytes": 48211}, ms=1320)
    s.llm("claude-3-5-sonnet-20241022", "Summarise the sources", "Recycling rates rose to ...", 5210, 640, 7340)
    s.end()
    s = Session(out, "research-002", "research-agent", at(4), {"topic": "chip export rules"}, rng)
    s.decide("Plan: search then summarise.", "web_search")
    s.tool("web_search", {"q": "semiconductor export rules"}, {"results": 8}, ms=910)
    for attempt in range(3):
        s.emit("rate_limit", 400 + attempt * 800, model="claude-3-5-sonnet-20241022",
               output_data={"error": f"429 Too Many Requests: rate limit exceeded, retry after {2 ** attempt * 4}s"},
               duration_ms=120)
    s.tool("fetch_url", {"url": "https://example.org/rules.pdf"}, error="timeout after 30000 ms", ms=30000)
    s.decide("Model rate-limited three times and the source timed out; giving up.", "abort")
    s.emit("error", 50, output_data={"error": "agent gave up: upstream unavailable"})
    s.end("error")
    s = Session(out, "research-003", "research-agent", at(7), {"topic": "heat pumps"}, rng)
    s.decide("Search for installation costs.", "web_search")
    for _ in range(6):
        s.tool("web_search", {"q": "heat pump installation cost"}, {"results": 0}, ms=760)
    s.llm("claude-3-5-haiku-20241022", "Why do searches return nothing?", "The query may be too narrow.", 2210, 120, 1900)
    s.end()
    s = Session(out, "research-004", "research-agent", at(10), {"topic": "EU AI act"}, rng)
    s.tool("web_search", {"q": "EU AI act obligations"}, {"results": 12}, ms=6400)
    s.tool("fetch_url", {"url": "https://example.org/ai-act"}, {"bytes": 91822}, ms=8700)
    s.llm("claude-3-5-sonnet-20241022", "Summarise obligations", "Providers must ...", 8800, 1020, 12400)
    s.end()

    # code-assistant: a clean fix, failing tests, a token spike, one session still running.
    s = Session(out, "code-001", "code-assistant", at(2), {"repo": "billing-service"}, rng)
    s.tool("read_file", {"path": "billing/invoice.py"}, {"lines": 212}, ms=40)
    s.llm("gpt-4o", "Fix the rounding bug", "Use Decimal with ROUND_HALF_UP.", 3120, 410, 4200)
    s.tool("run_tests", {"target": "billing"}, {"passed": 48, "failed": 0}, ms=5400)
    s.end()
    s = Session(out, "code-002", "code-assistant", at(5), {"repo": "auth-gateway"}, rng)
    s.llm("gpt-4o", "Add token refresh", "Patch ready.", 2890, 520, 3900)
    s.tool("run_tests", {"target": "auth"}, error="3 tests failed: test_refresh_expired (AssertionError)", ms=7100)
    s.llm("gpt-4o", "Fix the failing tests", "Adjusted expiry handling.", 3410, 380, 4100)
    s.tool("run_tests", {"target": "auth"}, {"passed": 61, "failed": 0}, ms=6900)
    s.end()
    s = Session(out, "code-003", "code-assistant", at(8), {"repo": "data-pipeline"}, rng)
    s.tool("read_file", {"path": "pipeline/dag.py"}, {"lines": 1840}, ms=60)
    s.llm("gpt-4o", "Refactor the whole DAG module", "Here is the refactor ...", 48200, 9100, 61000)
    s.end()
    s = Session(out, "code-004", "code-assistant", at(11), {"repo": "web-frontend"}, rng)
    s.llm("gpt-4o-mini", "Explain this React warning", "The key prop is missing.", 1320, 210, 1800)
    s.tool("read_file", {"path": "src/List.tsx"}, {"lines": 96}, ms=35)
    return out


def main(argv: list[str]) -> None:
    events = build()
    if "--now" in argv:
        last = max(datetime.fromisoformat(e["timestamp"]) for e in events)
        shift = datetime.now(UTC) - timedelta(minutes=5) - last
        for e in events:
            t = datetime.fromisoformat(e["timestamp"]) + shift
            e["timestamp"] = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
    for e in events:
        sys.stdout.write(json.dumps(e) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
