"""OTLP trace ingest throughput: POST /v1/traces (protobuf, plain and gzip) spans/s next to
POST /events events/s for the same data, in the same run, against real `obsctl serve` processes.

The workload is agent traces of 10 spans (an agent span, LLM calls with model, tokens and
messages, tool calls, a failure now and then), 10 traces per request. The three kinds of
request carry the same data: request i of /v1/traces (protobuf), of /v1/traces (protobuf,
gzip) and of /events (JSON) is built from the same ExportTraceServiceRequest, the /events
body holding exactly the events its spans map to. Each kind goes to its own server and
empty database, so none of them meets the others' data as duplicates, and the figures
compare the OTLP decoding and mapping on top of the same ingest. Rate limits are off
(OBSCTL_RATE_LIMITS=off); the servers listen on 127.0.0.1 only; each phase runs for a
bounded time.

Run: .venv/bin/python bench/otlp.py [--seconds 15] [--rounds 3] [--threads 4] [--requests 1500]
Goal (issue 15): OTLP protobuf spans/s at least 0.9 of /events events/s (decoding and mapping
should add little to the cost of storing), judged on the median over the rounds of the per-round
ratio; the script exits 1 when it is missed.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import Report, median, sized  # noqa: E402

SPANS_PER_TRACE = 10
TRACES_PER_REQUEST = 10
GOAL_RATIO = 0.9
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
        self.round_rates: list[float | None] = []

    @property
    def rate(self) -> float:
        """Items per second over all rounds."""
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
        elapsed = time.perf_counter() - started
        self.elapsed += elapsed
        self.items += done[0] * self.items_per_body
        # None for a round that found no body left (--requests too few for --seconds).
        self.round_rates.append(done[0] * self.items_per_body / elapsed if done[0] and elapsed else None)

    @property
    def median_rate(self) -> float:
        rates = [r for r in self.round_rates if r is not None]
        return median(rates) if rates else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=sized(15.0, 3.0),
                        help="time per kind of request, over all rounds")
    parser.add_argument("--threads", type=int, default=4, help="client threads (server: 4)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the three kinds")
    parser.add_argument("--requests", type=int, default=sized(1500, 150),
                        help="distinct request bodies built per phase (upper bound)")
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    args = parser.parse_args()
    from live_server import start_server

    per_body = SPANS_PER_TRACE * TRACES_PER_REQUEST
    print(f"building {args.requests} request bodies of {per_body} spans, in three encodings ...",
          file=sys.stderr)
    rng = random.Random(7)
    now_ns = time.time_ns()
    otlp_plain = [build_request(rng, i, now_ns) for i in range(args.requests)]
    otlp_gzip = [gzip.compress(body) for body in otlp_plain]
    events = [events_body(body) for body in otlp_plain]  # the same spans, as /events JSON
    report = Report("OTLP trace ingest")
    report.figure(f"mean body size: protobuf {sum(map(len, otlp_plain)) / len(otlp_plain) / 1024:.1f} KiB, "
                  f"protobuf+gzip {sum(map(len, otlp_gzip)) / len(otlp_gzip) / 1024:.1f} KiB, "
                  f"/events JSON {sum(map(len, events)) / len(events) / 1024:.1f} KiB")

    with tempfile.TemporaryDirectory() as tmp:
        servers = []
        try:
            for kind in ("events", "plain", "gzip"):
                server_dir = Path(tmp) / kind
                server_dir.mkdir()
                servers.append(start_server(server_dir / "bench.db", server_dir,
                                            {"OBSCTL_RATE_LIMITS": "off"}, threads=4))
            pb = {"Content-Type": "application/x-protobuf"}
            phases = [
                Phase("/events (JSON)", f"{servers[0].url}/events", events,
                      {"Content-Type": "application/json"}, per_body),
                Phase("/v1/traces (protobuf)", f"{servers[1].url}/v1/traces", otlp_plain, pb, per_body),
                Phase("/v1/traces (protobuf, gzip)", f"{servers[2].url}/v1/traces", otlp_gzip,
                      {**pb, "Content-Encoding": "gzip"}, per_body),
            ]
            # Phases alternate over several rounds, so load from other processes and the
            # growing databases weigh on all of them alike.
            for _ in range(args.rounds):
                for phase in phases:
                    phase.run(args.threads, args.seconds / args.rounds)
            totals = [requests.get(f"{s.url}/sessions?limit=1", timeout=30).json()["total"]
                      for s in servers]
        finally:
            for server in servers:
                server.stop()

    report.figure(f"OTLP ingest vs /events: {args.threads} client threads, 4 server threads each, "
                  f"{per_body} spans/events per request, {args.rounds} rounds, "
                  f"up to {args.seconds:.0f} s per kind")
    reference = phases[0]
    for phase in phases:
        rounds = ", ".join("no bodies left" if r is None else f"{r:,.0f}" for r in phase.round_rates)
        report.figure(f"  {phase.name:30s} {phase.median_rate:9,.0f} per s median of rounds "
                      f"({rounds}); {phase.items:,} in {phase.elapsed:.1f} s")
    report.figure(f"  sessions stored: /events {totals[0]:,}, protobuf {totals[1]:,}, gzip {totals[2]:,}")
    ratios = [otlp / ev for otlp, ev in zip(phases[1].round_rates, reference.round_rates, strict=True)
              if otlp is not None and ev is not None]
    if not ratios:
        raise SystemExit("no round measured both kinds: raise --requests")
    report.check("OTLP protobuf spans/s / /events events/s", 100 * median(ratios), ">=", 100 * GOAL_RATIO,
                 unit="%", basis=f"median of {len(ratios)} rounds", fmt=".0f")
    report.finish(args.report)

if __name__ == "__main__":
    main()
