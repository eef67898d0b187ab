"""OTLP trace ingest throughput: POST /v1/traces (protobuf, plain and gzip) spans/s next to
POST /events events/s for the same data, in the same run, against one real `obsctl serve`.

The workload is agent traces of 10 spans (an agent span, LLM calls with model, tokens and
messages, tool calls, a failure now and then), 10 traces per request. The /events bodies
carry exactly the events the OTLP spans map to, so the two figures compare the OTLP decoding
and mapping on top of the same ingest. Rate limits are off (OBSCTL_RATE_LIMITS=off); the
server listens on 127.0.0.1 only; each phase runs for a bounded time.

Run: .venv/bin/python bench/otlp.py [--seconds 15] [--rounds 3] [--threads 4] [--requests 1500]
Goal: OTLP protobuf spans/s at least half of /events events/s (decoding and mapping should
not dominate the cost of storing).
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

SPANS_PER_TRACE = 10
TRACES_PER_REQUEST = 10
GOAL_RATIO = 0.5
MODELS = ("gpt-4o", "gpt-4o-mini", "claude-sonnet-4")
TOOLS = ("web_search", "db_query", "send_email")


def _kv(key, value):
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    if isinstance(value, str):
        return KeyValue(key=key, value=AnyValue(string_value=value))
    return KeyValue(key=key, value=AnyValue(int_value=value))


def build_request(rng: random.Random, index: int, now_ns: int) -> bytes:
    """One ExportTraceServiceRequest: TRACES_PER_REQUEST agent traces, serialised."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend([
        _kv("service.name", f"agent-{index % 20:02d}"), _kv("deployment.environment", "bench")])
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "bench.agent"
    for t in range(TRACES_PER_REQUEST):
        trace_id = rng.randbytes(16)
        root_id = rng.randbytes(8)
        start = now_ns - rng.randrange(3600 * 10**9)
        for s in range(SPANS_PER_TRACE):
            span = scope_spans.spans.add()
            span.trace_id = trace_id
            span.span_id = root_id if s == 0 else rng.randbytes(8)
            span.start_time_unix_nano = start + s * 50_000_000
            span.end_time_unix_nano = span.start_time_unix_nano + rng.randrange(10, 2000) * 1_000_000
            if s == 0:
                span.name = "invoke_agent planner"
                span.attributes.extend([_kv("gen_ai.operation.name", "invoke_agent"),
                                        _kv("gen_ai.agent.name", "planner"),
                                        _kv("gen_ai.conversation.id", f"conv-{index}-{t}")])
                continue
            span.parent_span_id = root_id
            if s % 3 == 0:
                tool = rng.choice(TOOLS)
                span.name = f"execute_tool {tool}"
                span.attributes.extend([
                    _kv("gen_ai.operation.name", "execute_tool"), _kv("gen_ai.tool.name", tool),
                    _kv("gen_ai.tool.call.arguments", '{"query": "quarterly revenue", "limit": 5}'),
                    _kv("gen_ai.tool.call.result", '{"rows": 5, "status": "ok"}')])
                if rng.random() < 0.05:
                    span.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message="tool timed out"))
            else:
                model = rng.choice(MODELS)
                span.name = f"chat {model}"
                span.kind = Span.SPAN_KIND_CLIENT
                span.attributes.extend([
                    _kv("gen_ai.operation.name", "chat"), _kv("gen_ai.request.model", model),
                    _kv("gen_ai.usage.input_tokens", rng.randrange(100, 4000)),
                    _kv("gen_ai.usage.output_tokens", rng.randrange(10, 800)),
                    _kv("gen_ai.input.messages", '[{"role": "user", "parts": [{"type": "text", '
                                                 '"content": "Summarise the quarterly figures."}]}]'),
                    _kv("gen_ai.output.messages", '[{"role": "assistant", "parts": [{"type": "text", '
                                                  '"content": "Revenue rose 4%."}]}]')])
    return request.SerializeToString()


def events_body(body: bytes) -> bytes:
    """The POST /events body holding the events the request's spans map to."""
    from obsctl.services.otlp.mapping import explicit_session, span_to_event
    from obsctl.services.otlp.wire import decode_protobuf

    records = decode_protobuf(body)
    sessions = {r.trace_id: explicit_session(r) for r in records if explicit_session(r)}
    return orjson.dumps({"events": [span_to_event(r, sessions.get(r.trace_id, r.trace_id))
                                    for r in records]})


class Phase:
    """One kind of request; its bodies are used once each, across rounds."""

    def __init__(self, name: str, url: str, bodies: list[bytes], headers: dict, items_per_body: int):
        self.name, self.url, self.bodies, self.headers = name, url, bodies, headers
        self.items_per_body = items_per_body
        self.next = 0
        self.items = 0
        self.elapsed = 0.0

    @property
    def rate(self) -> float:
        return self.items / self.elapsed if self.elapsed else 0.0

    def run(self, threads: int, seconds: float) -> None:
        """Post bodies from `threads` clients until the time or the bodies run out."""
        lock = threading.Lock()
        done = [0]
        failures: list[str] = []
        deadline = time.perf_counter() + seconds

        def worker():
            http = requests.Session()
            while time.perf_counter() < deadline:
                with lock:
                    i = self.next
                    self.next += 1
                if i >= len(self.bodies):
                    return
                r = http.post(self.url, data=self.bodies[i], headers=self.headers, timeout=60)
                if r.status_code != 200:
                    failures.append(f"{r.status_code} {r.text[:200]}")
                    return
                with lock:
                    done[0] += 1

        started = time.perf_counter()
        pool = [threading.Thread(target=worker) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        if failures:
            raise SystemExit(f"requests to {self.url} failed: {failures[0]}")
        self.elapsed += time.perf_counter() - started
        self.items += done[0] * self.items_per_body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0,
                        help="time per kind of request, over all rounds")
    parser.add_argument("--threads", type=int, default=4, help="client threads (server: 4)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the three kinds")
    parser.add_argument("--requests", type=int, default=1500,
                        help="distinct request bodies built per phase (upper bound)")
    args = parser.parse_args()
    from conftest import start_server

    per_body = SPANS_PER_TRACE * TRACES_PER_REQUEST
    print(f"building {args.requests} x 3 request bodies of {per_body} spans ...", file=sys.stderr)
    rng = random.Random(7)
    now_ns = time.time_ns()
    otlp_plain = [build_request(rng, i, now_ns) for i in range(args.requests)]
    otlp_gzip = [gzip.compress(build_request(rng, i, now_ns)) for i in range(args.requests)]
    events = [events_body(build_request(rng, i, now_ns)) for i in range(args.requests)]
    print(f"mean body size: protobuf {sum(map(len, otlp_plain)) / len(otlp_plain) / 1024:.1f} KiB, "
          f"protobuf+gzip {sum(map(len, otlp_gzip)) / len(otlp_gzip) / 1024:.1f} KiB, "
          f"/events JSON {sum(map(len, events)) / len(events) / 1024:.1f} KiB", file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp) / "bench.db", Path(tmp), {"OBSCTL_RATE_LIMITS": "off"},
                              threads=4)
        try:
            pb = {"Content-Type": "application/x-protobuf"}
            phases = [
                Phase("/events (JSON)", f"{server.url}/events", events,
                      {"Content-Type": "application/json"}, per_body),
                Phase("/v1/traces (protobuf)", f"{server.url}/v1/traces", otlp_plain, pb, per_body),
                Phase("/v1/traces (protobuf, gzip)", f"{server.url}/v1/traces", otlp_gzip,
                      {**pb, "Content-Encoding": "gzip"}, per_body),
            ]
            # Phases alternate over several rounds, so load from other processes and the
            # growing database weigh on all of them alike.
            for _ in range(args.rounds):
                for phase in phases:
                    phase.run(args.threads, args.seconds / args.rounds)
            total = requests.get(f"{server.url}/sessions?limit=1", timeout=30).json()["total"]
        finally:
            server.stop()

    print(f"\nOTLP ingest vs /events: {args.threads} client threads, 4 server threads, "
          f"{per_body} spans/events per request, {args.rounds} rounds, "
          f"up to {args.seconds:.0f} s per kind\n")
    reference = phases[0].rate
    for phase in phases:
        print(f"  {phase.name:30s} {phase.rate:9,.0f} per s  ({phase.items:,} in {phase.elapsed:.1f} s)  "
              f"{phase.rate / reference:5.2f}x /events")
    ratio = phases[1].rate / reference
    print(f"\n  sessions stored: {total:,}")
    print(f"  goal: OTLP protobuf >= {GOAL_RATIO:.0%} of /events -> {ratio:.0%} "
          f"({'met' if ratio >= GOAL_RATIO else 'NOT met'})")


if __name__ == "__main__":
    main()
