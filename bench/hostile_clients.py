"""Hostile clients against real `obsctl serve` processes on 127.0.0.1 (issue 32): what each
attack costs the server, and whether it still answers everyone else.

- spool: 21 unauthenticated connections send nearly 10 MiB each to routes that take no body
  or no authenticated body (POST /health, OPTIONS /events, POST /ui/login); figure: the most
  bytes the server held in spooled temporary files at once.
- trickle: 1,100 connections from 127.0.0.2 send a body one byte every 6 s (and reconnect
  when dropped) while GET /health is asked from 127.0.0.1 twice a second; figures: the share
  of /health probes answered within 2 s and the longest time it went unanswered.
- guess: 1,000 wrong API keys over HTTP (POST /events with a bad body, so that the right key
  would answer 400) and 500 over gRPC, from one address; figure: how many got a verdict
  (401 / UNAUTHENTICATED) rather than 429 / RESOURCE_EXHAUSTED, and in what time.
- grpc-unauthenticated: 200 OTLP/gRPC calls of ~10 MB without the key, 20 at a time; figure:
  the server's resident memory growth.
- spans: one 9.6 MB POST /v1/traces of 200,000 spans with the key; figures: the answer, its
  time and the server's peak resident memory growth.

Run: .venv/bin/python bench/hostile_clients.py [--only spool,trickle,guess,grpc-unauthenticated,spans]
Targets: nothing spooled; /health answered throughout; at most the configured failures
(OBSCTL_AUTH_FAILURE_LIMIT) get a verdict; unauthenticated gRPC costs under 50 MiB; the big
OTLP request is refused by the span cap within 2 s and under 100 MiB. Exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import http.client
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _probes import raw_request, rss_kib, spooled_bytes  # noqa: E402
from _report import Report, sized  # noqa: E402

KEY = "bench-key"
MIB = 1024 * 1024
BODY_LIMIT = 10 * MIB
SCENARIOS = ("spool", "trickle", "guess", "grpc-unauthenticated", "spans")


def start(tmp: Path, env: dict | None = None, args: tuple[str, ...] = ()):
    from live_server import start_server

    tmp.mkdir(parents=True, exist_ok=True)
    return start_server(tmp / "obsctl.db", tmp, env, threads=4, args=args)


def spool(report: Report, tmp: Path) -> None:
    spool_dir = tmp / "spool-tmp"
    spool_dir.mkdir(parents=True)
    server = start(tmp / "spool", {"SERVICE_API_KEY": KEY, "TMPDIR": str(spool_dir), "OBSCTL_RATE_LIMITS": "off"})
    try:
        heads = []
        for method, path in (("POST", "/health"), ("OPTIONS", "/events"), ("POST", "/ui/login")):
            for _ in range(7):
                heads.append(f"{method} {path} HTTP/1.1\r\nHost: x\r\n"
                             f"Content-Type: application/x-www-form-urlencoded\r\n"
                             f"Content-Length: {BODY_LIMIT}\r\n\r\n")
        socks: list[socket.socket] = []
        lock = threading.Lock()

        def send(head):
            sock = raw_request(server.port, head, BODY_LIMIT - 1)  # all but the last byte
            with lock:
                socks.append(sock)

        peak = 0
        threads = [threading.Thread(target=send, args=(h,)) for h in heads]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            peak = max(peak, spooled_bytes(server.process.pid, spool_dir))
            if all(not t.is_alive() for t in threads):
                time.sleep(0.5)
                peak = max(peak, spooled_bytes(server.process.pid, spool_dir))
                break
            time.sleep(0.05)
        for t in threads:
            t.join()
        for sock in socks:
            sock.close()
        report.figure(f"spool: {len(heads)} unauthenticated bodies of {BODY_LIMIT // MIB} MiB to POST /health, "
                      f"OPTIONS /events, POST /ui/login: {peak / MIB:.1f} MiB spooled at once")
        report.check("bytes spooled by unauthenticated bodies", peak / MIB, "<=", 0.0, unit=" MiB", basis="peak")
    finally:
        server.stop()


def trickle(report: Report, tmp: Path, connections: int, seconds: float) -> None:
    server = start(tmp / "trickle", {"SERVICE_API_KEY": KEY, "OBSCTL_RATE_LIMITS": "off"})
    head = (b"POST /health HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 1000\r\n\r\n")
    stop = threading.Event()
    opened = [0]

    def attacker():
        socks: list[socket.socket | None] = [None] * connections
        next_byte = 0.0
        while not stop.is_set():
            for i, sock in enumerate(socks):
                if stop.is_set():
                    break
                if sock is None:
                    try:
                        sock = socket.create_connection(("127.0.0.1", server.port), timeout=0.5,
                                                        source_address=("127.0.0.2", 0))
                        sock.sendall(head)
                        sock.setblocking(False)
                        socks[i] = sock
                        opened[0] += 1
                    except OSError:
                        continue
            if time.monotonic() >= next_byte:
                next_byte = time.monotonic() + 6
                for i, sock in enumerate(socks):
                    if sock is None:
                        continue
                    try:
                        if sock.recv(1, socket.MSG_PEEK) == b"":  # closed by the server
                            raise OSError
                    except BlockingIOError:
                        pass
                    except OSError:
                        sock.close()
                        socks[i] = None
                        continue
                    try:
                        sock.send(b"x")
                    except OSError:
                        sock.close()
                        socks[i] = None
            stop.wait(0.2)
        for sock in socks:
            if sock is not None:
                sock.close()

    thread = threading.Thread(target=attacker)
    thread.start()
    try:
        time.sleep(3)  # let the connections open
        answered, probes, gap, last_ok, longest = 0, 0, 0.0, time.monotonic(), 0.0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            probes += 1
            try:
                ok = requests.get(f"{server.url}/health", timeout=2).status_code == 200
            except requests.RequestException:
                ok = False
            now = time.monotonic()
            if ok:
                answered += 1
                last_ok = now
            longest = max(longest, now - last_ok)
            time.sleep(max(0.0, 0.5 - (time.monotonic() - now)))
        del gap
    finally:
        stop.set()
        thread.join()
        server.stop()
    share = 100.0 * answered / probes if probes else 0.0
    report.figure(f"trickle: {connections} connections from 127.0.0.2 sending a body byte every 6 s "
                  f"({opened[0]} connections opened in all) for {seconds:.0f} s: GET /health from 127.0.0.1 "
                  f"answered {answered}/{probes} probes ({share:.0f}%), longest unanswered {longest:.1f} s")
    report.check("/health probes answered during the trickle", share, ">=", 100.0, unit="%", basis="all probes",
                 fmt=".0f")


def guess(report: Report, tmp: Path, http_guesses: int, grpc_guesses: int) -> None:
    import grpc
    from live_server import free_port

    grpc_port = free_port()
    server = start(tmp / "guess", {"SERVICE_API_KEY": KEY}, args=("--otlp-grpc-port", str(grpc_port)))
    try:
        counts: dict[int, int] = {}
        lock = threading.Lock()
        done = [0]

        def worker():
            http = requests.Session()
            while True:
                with lock:
                    if done[0] >= http_guesses:
                        return
                    done[0] += 1
                    n = done[0]
                status = http.post(f"{server.url}/events", data=b"{}", timeout=10,
                                   headers={"X-API-Key": f"guess-{n}", "Content-Type": "application/json"}).status_code
                with lock:
                    counts[status] = counts.get(status, 0) + 1

        started = time.perf_counter()
        pool = [threading.Thread(target=worker) for _ in range(4)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        http_seconds = time.perf_counter() - started
        http_verdicts = counts.get(401, 0)
        right = requests.post(f"{server.url}/events", data=b"{}", headers={"X-API-Key": KEY}, timeout=10,
                              ).status_code
        elsewhere = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10,
                                               source_address=("127.0.0.3", 0))
        elsewhere.request("POST", "/events", body=b"{}", headers={"X-API-Key": KEY})
        other = elsewhere.getresponse().status
        elsewhere.close()
        report.figure(f"guess: {http_guesses} wrong keys over HTTP in {http_seconds:.1f} s: "
                      f"{http_verdicts} answered 401, {counts.get(429, 0)} answered 429; the right key then "
                      f"answers {right} from the same address, {other} from 127.0.0.3")
    finally:
        server.stop()
    # gRPC on a server of its own: the failures of one address count for HTTP and gRPC together.
    server = start(tmp / "guess-grpc", {"SERVICE_API_KEY": KEY}, args=("--otlp-grpc-port", str(grpc_port)))
    try:

        codes: dict[str, int] = {}
        started = time.perf_counter()
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            call = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                       request_serializer=None, response_deserializer=None)
            for n in range(grpc_guesses):
                try:
                    call(b"", metadata=(("x-api-key", f"guess-{n}"),), timeout=10)
                    code = "OK"
                except grpc.RpcError as exc:
                    code = exc.code().name
                codes[code] = codes.get(code, 0) + 1
        grpc_seconds = time.perf_counter() - started
        grpc_verdicts = codes.get("UNAUTHENTICATED", 0)
        report.figure(f"guess: {grpc_guesses} wrong keys over gRPC in {grpc_seconds:.1f} s: "
                      f"{grpc_verdicts} UNAUTHENTICATED, {codes.get('RESOURCE_EXHAUSTED', 0)} RESOURCE_EXHAUSTED")
        report.check("HTTP key guesses given a verdict", http_verdicts, "<=", 10, basis=f"of {http_guesses}",
                     fmt=".0f")
        report.check("gRPC key guesses given a verdict", grpc_verdicts, "<=", 10, basis=f"of {grpc_guesses}",
                     fmt=".0f")
    finally:
        server.stop()


def grpc_unauthenticated(report: Report, tmp: Path, calls: int) -> None:
    import grpc
    from live_server import free_port

    grpc_port = free_port()
    server = start(tmp / "grpc", {"SERVICE_API_KEY": KEY, "OBSCTL_RATE_LIMITS": "off",
                                  "OBSCTL_AUTH_FAILURE_LIMIT": "off"},
                   args=("--otlp-grpc-port", str(grpc_port)))
    try:
        time.sleep(0.5)
        before = rss_kib(server.process.pid)
        body = b"\x0a" + b"x" * (BODY_LIMIT - 200)
        codes: dict[str, int] = {}
        lock = threading.Lock()
        left = [calls]

        def worker():
            with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
                call = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                           request_serializer=None, response_deserializer=None)
                while True:
                    with lock:
                        if left[0] <= 0:
                            return
                        left[0] -= 1
                    try:
                        call(body, timeout=30)
                        code = "OK"
                    except grpc.RpcError as exc:
                        code = exc.code().name
                    with lock:
                        codes[code] = codes.get(code, 0) + 1

        started = time.perf_counter()
        pool = [threading.Thread(target=worker) for _ in range(20)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        seconds = time.perf_counter() - started
        time.sleep(0.5)
        after, peak = rss_kib(server.process.pid), rss_kib(server.process.pid, "VmHWM")
        growth = (max(after, peak) - before) / 1024
        report.figure(f"grpc-unauthenticated: {calls} calls of {len(body) / MIB:.1f} MiB without the key "
                      f"in {seconds:.1f} s ({codes}): server RSS {before / 1024:.0f} -> {after / 1024:.0f} MiB, "
                      f"peak {peak / 1024:.0f} MiB")
        report.check("server memory growth from unauthenticated gRPC", growth, "<", 50.0, unit=" MiB",
                     basis="peak")
    finally:
        server.stop()


def big_trace_request(spans: int) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    now = time.time_ns()
    for i in range(spans):
        span = scope.spans.add()
        span.trace_id = (i // 100 + 1).to_bytes(16, "big")
        span.span_id = (i + 1).to_bytes(8, "big")
        span.name = "s"
        span.start_time_unix_nano = now - 10**9
        span.end_time_unix_nano = now
    return request.SerializeToString()


def spans(report: Report, tmp: Path, count: int) -> None:
    body = big_trace_request(count)
    server = start(tmp / "spans", {"SERVICE_API_KEY": KEY})
    try:
        time.sleep(0.5)
        before = rss_kib(server.process.pid)
        started = time.perf_counter()
        response = requests.post(f"{server.url}/v1/traces", data=body, timeout=600,
                                 headers={"X-API-Key": KEY, "Content-Type": "application/x-protobuf"})
        seconds = time.perf_counter() - started
        peak = rss_kib(server.process.pid, "VmHWM")
        growth = (peak - before) / 1024
        report.figure(f"spans: one POST /v1/traces of {count:,} spans ({len(body) / MIB:.1f} MiB): "
                      f"{response.status_code} {response.text[:100]!r} in {seconds:.1f} s; server RSS "
                      f"{before / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB")
        report.check("time of the oversized OTLP request", seconds, "<", 2.0, unit=" s", basis="one request")
        report.check("peak memory growth from the oversized OTLP request", growth, "<", 100.0, unit=" MiB",
                     basis="one request")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    parser.add_argument("--connections", type=int, default=sized(1100, 150))
    parser.add_argument("--trickle-seconds", type=float, default=sized(30.0, 8.0))
    parser.add_argument("--http-guesses", type=int, default=sized(1000, 100))
    parser.add_argument("--grpc-guesses", type=int, default=sized(500, 50))
    parser.add_argument("--grpc-calls", type=int, default=sized(200, 20))
    parser.add_argument("--spans", type=int, default=sized(200_000, 20_000))
    parser.add_argument("--report", help="append a Markdown section of the figures to this file")
    args = parser.parse_args()
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(chosen) - set(SCENARIOS)
    if unknown:
        raise SystemExit(f"unknown scenarios: {', '.join(sorted(unknown))}; choose from {', '.join(SCENARIOS)}")
    report = Report("Hostile clients")
    with tempfile.TemporaryDirectory(prefix="obsctl-hostile-") as directory:
        tmp = Path(directory)
        if "spool" in chosen:
            spool(report, tmp)
        if "trickle" in chosen:
            trickle(report, tmp, args.connections, args.trickle_seconds)
        if "guess" in chosen:
            guess(report, tmp, args.http_guesses, args.grpc_guesses)
        if "grpc-unauthenticated" in chosen:
            grpc_unauthenticated(report, tmp, args.grpc_calls)
        if "spans" in chosen:
            spans(report, tmp, args.spans)
    report.finish(args.report)


if __name__ == "__main__":
    main()
