"""Benchmark printq: the CLI against jq, the HTTP server, and scale to a million records.

    .venv/bin/python bench/printq.py [--runs 21] [--requests 4000] [--clients 4] [--records 1000000]

1. CLI: wall time of ``printq livePercent greater 50`` (the venv's console script, one process per
   run) against ``jq '[.[] | select(.print_data.livePercent > 50)] | length'`` on the same bundled
   file, printq both with its index cache (warm) and without it (cold: the JSON parsed every
   run, as on a first run). Medians over --runs runs each, interleaved in a seeded random order.
   Target: printq with its index cache at least 2x faster than jq; the cold ratio is reported
   beside it. The jq comparison is skipped with a message when jq is not installed.
2. HTTP: a real ``printq serve`` on 127.0.0.1; --clients threads send --requests seeded random
   queries over keep-alive connections. Reports requests/s and p50/p99 latency.
3. Scale: synthetic files of 10k and --records records (seeded, cached in bench/.cache); for each,
   a fresh process measures the JSON load time, peak RSS, index-cache load time and the in-process
   query time. Target: query time at 1M within 3x of query time at 10k.

Targets are judged on medians; the script exits 1 when one is missed. Only 127.0.0.1 is contacted. Generated files and the index cache live in bench/.cache (gitignored).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import Report, sized  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
BIN = Path(sys.executable).parent
PRINTQ = BIN / "printq"
BUNDLED = ROOT / "printq" / "data" / "bioprint-data.json"
SEED = 20261122
GENERATOR_VERSION = 1
JQ_FILTER = "[.[] | select(.print_data.livePercent > 50)] | length"
QUERY = ["livePercent", "greater", "50"]


def heading(report: Report, title: str) -> None:
    report.figure()
    report.figure(f"== {title}")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def wall_time(cmd: list[str], env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, result.stdout.strip()


def bench_cli_vs_jq(report: Report, runs: int) -> None:
    heading(report, f"CLI: printq vs jq, `{' '.join(QUERY)}` on the bundled 10,000 records ({runs} runs each)")
    env = {**os.environ, "PRINTQ_CACHE_DIR": str(CACHE / "index")}
    env.pop("PRINTQ_DATA", None)
    cold_env = {**env, "PRINTQ_CACHE_DIR": ""}  # index disabled: parse the JSON every time
    printq_cmd = [str(PRINTQ), *QUERY]
    jq = shutil.which("jq")
    answer = wall_time(printq_cmd, env)[1]  # writes the index if it is not there yet
    assert answer == "6861", answer

    commands = {"printq": (printq_cmd, env), "printq cold": (printq_cmd, cold_env)}
    if jq:
        commands["jq"] = ([jq, JQ_FILTER, str(BUNDLED)], env)
    rng = random.Random(SEED)
    order = [tool for tool in commands for _ in range(runs)]
    rng.shuffle(order)  # interleave so drift in machine load hits every tool alike
    times: dict[str, list[float]] = {tool: [] for tool in commands}
    for tool in order:
        cmd, tool_env = commands[tool]
        elapsed, out = wall_time(cmd, tool_env)
        assert out == "6861", (tool, out)
        times[tool].append(elapsed)

    cached, cold = statistics.median(times["printq"]), statistics.median(times["printq cold"])
    report.figure(f"printq, with index cache, median:           {ms(cached)}")
    report.figure(f"printq, no index cache (JSON parse), median: {ms(cold)}")
    if not jq:
        report.figure("jq: not installed, comparison skipped (install jq to compare)")
        return
    jq_median = statistics.median(times["jq"])
    report.figure(f"jq, median:                                 {ms(jq_median)}")
    report.figure(f"ratio jq/printq with index cache: {jq_median / cached:.1f}x; "
                  f"without it (cold): {jq_median / cold:.1f}x (the 2x target is for the cached run)")
    report.check("jq time / printq time (index cache)", jq_median / cached, ">=", 2, unit="x",
                 basis=f"medians of {runs}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(connection, path: str) -> int:
    connection.request("GET", path)
    response = connection.getresponse()
    response.read()
    return response.status


def start_server(threads: int) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {**os.environ, "PRINTQ_CACHE_DIR": str(CACHE / "index")}
    env.pop("PRINTQ_DATA", None)
    process = subprocess.Popen([str(PRINTQ), "serve", "--port", str(port), "--threads", str(threads)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if get(http.client.HTTPConnection("127.0.0.1", port, timeout=1), "/health") == 200:
                return process, port
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("printq serve did not start")


def random_paths(count: int) -> list[str]:
    rng = random.Random(SEED)
    metrics = ["serial", "livePercent", "deadPercent", "elasticity", "cl_duration", "cl_intensity",
               "extruder1", "extruder2", "layerHeight", "layerNum", "wellplate"]
    paths = []
    for _ in range(count):
        metric = rng.choice(metrics)
        if rng.random() < 0.2:
            paths.append(f"/api/prints/{metric}/greater/{rng.choice(['Maximum', 'Minimum', 'Average'])}")
        else:
            value = round(rng.uniform(0, 100), rng.choice([0, 2]))
            paths.append(f"/api/prints/{metric}/{rng.choice(['greater', 'lesser', 'equal'])}/{value}")
    return paths


def bench_http(report: Report, total: int, clients: int, threads: int) -> None:
    heading(report, f"HTTP: {total} requests from {clients} client threads, printq serve --threads {threads}")
    process, port = start_server(threads)
    try:
        paths = random_paths(total)
        shards = [paths[i::clients] for i in range(clients)]
        latencies: list[list[float]] = [[] for _ in range(clients)]
        failures: list[str] = []

        def client(index: int) -> None:
            # http.client rather than requests: a lighter client leaves more of the shared CPUs to
            # the server, so the numbers say more about printq than about the client.
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            get(connection, "/health")  # open the keep-alive connection before timing
            for path in shards[index]:
                start = time.perf_counter()
                status = get(connection, path)
                latencies[index].append(time.perf_counter() - start)
                if status != 200:
                    failures.append(f"{path}: {status}")
            connection.close()

        workers = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        start = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - start
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    everything = sorted(t for shard in latencies for t in shard)
    p99 = everything[min(len(everything) - 1, int(len(everything) * 0.99))]
    report.figure(f"requests/s: {len(everything) / elapsed:,.0f}   p50: {ms(statistics.median(everything))}   "
                  f"p99: {ms(p99)}   max: {ms(everything[-1])}   non-200: {len(failures)}")
    report.figure("(keep-alive connections; client and server share this machine's CPUs)")


def synthetic_record(rng: random.Random, n: int) -> dict:
    """One record shaped and distributed like the BioBots data."""
    live = round(rng.uniform(0, 100), 2)
    crosslinked = rng.random() < 0.7
    return {
        "print_data": {"deadPercent": round(rng.uniform(0, 100 - live), 2),
                       "elasticity": round(rng.uniform(0, 140), 2), "livePercent": live},
        "print_info": {
            "crosslinking": {"cl_duration": rng.randint(1, 30000) if crosslinked else 0,
                             "cl_enabled": crosslinked,
                             "cl_intensity": rng.randint(1, 99) if crosslinked else 0},
            "files": {"input": f"file_{n}.gcode", "output": f"file_{n}_output.gcode"},
            "pressure": {"extruder1": float(rng.randint(1, 119)), "extruder2": float(rng.randint(1, 119))},
            "resolution": {"layerHeight": rng.randint(1, 9) / 10, "layerNum": rng.randint(1, 49)},
            "wellplate": rng.choice((1, 6, 12, 24, 48, 96)),
        },
        "user_info": {"email": f"user{n % 1000}@gmail.com", "serial": rng.randint(0, 99)},
    }


def synthetic_file(records: int) -> Path:
    """A seeded synthetic data file, generated once in batches (bounded memory) and reused."""
    import orjson

    path = CACHE / f"synthetic-{records}-s{SEED}-v{GENERATOR_VERSION}.json"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rng = random.Random(SEED)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(b"[")
        for first in range(0, records, 10_000):
            batch = [synthetic_record(rng, n) for n in range(first, min(records, first + 10_000))]
            f.write((b"," if first else b"") + orjson.dumps(batch)[1:-1])
        f.write(b"]")
    os.replace(tmp, path)
    size_mb = path.stat().st_size / 1e6
    print(f"generated {path.name} ({size_mb:.0f} MB) in {time.perf_counter() - started:.1f} s")
    return path


def measure_in_child(path: str, index_dir: str) -> dict:
    """Run in a fresh process: load from JSON, peak RSS, index load and in-process query time."""
    import resource

    from printq.dataset import load_snapshot
    from printq.queries import parse_query, run_query

    shutil.rmtree(index_dir, ignore_errors=True)
    started = time.perf_counter()
    snapshot = load_snapshot(path, index_dir)  # parses the JSON and writes the index
    load = time.perf_counter() - started
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.perf_counter()
    load_snapshot(path, index_dir)
    index_load = time.perf_counter() - started

    rng = random.Random(SEED)
    queries = [parse_query(p.split("/")[3], p.split("/")[4], p.split("/")[5]) for p in random_paths(1000)]
    rng.shuffle(queries)
    rounds = []
    for _ in range(15):  # median of 15 rounds of 1000 queries
        started = time.perf_counter()
        for query in queries:
            run_query(snapshot, query)
        rounds.append((time.perf_counter() - started) / len(queries))
    return {"records": snapshot.records, "load": load, "peak_rss": peak_rss, "index_load": index_load,
            "query": statistics.median(rounds)}


def run_child(path: Path) -> dict:
    index_dir = CACHE / f"index-{path.stem}"
    out = subprocess.run([sys.executable, __file__, "--child", str(path), str(index_dir)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def bench_scale(report: Report, records: int) -> None:
    heading(report, f"Scale: 10,000 vs {records:,} synthetic records")
    small, large = run_child(synthetic_file(10_000)), run_child(synthetic_file(records))
    for label, result in (("10k", small), (f"{records // 1000}k", large)):
        report.figure(f"{label:>6}: JSON load {result['load']:.2f} s, peak RSS "
                      f"{result['peak_rss'] / 2**20:.0f} MiB, index load {ms(result['index_load'])}, "
                      f"query {result['query'] * 1e6:.2f} us (median of 15 rounds of 1000)")
    report.check(f"query time at {records:,} / at 10,000 records", large["query"] / small["query"], "<=", 3,
                 unit="x", basis="medians of 15", fmt=".2f")
    env = {**os.environ, "PRINTQ_CACHE_DIR": str(CACHE / f"index-{synthetic_file(records).stem}")}
    cli = [wall_time([str(PRINTQ), *QUERY, "--data", str(synthetic_file(records))], env)[0] for _ in range(5)]
    report.figure(f"CLI `printq {' '.join(QUERY)}` on {records:,} records with the index: "
                  f"median {ms(statistics.median(cli))}")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        # This script is bench/printq.py: drop its directory from the path so `import printq`
        # finds the package, not this file.
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
        print(json.dumps(measure_in_child(sys.argv[2], sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=sized(21, 5), help="CLI runs per tool")
    parser.add_argument("--requests", type=int, default=sized(4000, 400), help="HTTP requests in total")
    parser.add_argument("--clients", type=int, default=4, help="HTTP client threads")
    parser.add_argument("--threads", type=int, default=4, help="server worker threads")
    parser.add_argument("--records", type=int, default=sized(1_000_000, 50_000),
                        help="records in the large synthetic file")
    parser.add_argument("--report", help="append a Markdown section of the figures to this file "
                        "(default: $BENCH_REPORT)")
    args = parser.parse_args()
    if not PRINTQ.exists():
        raise SystemExit(f"{PRINTQ} not found: run `make install` first")
    started = time.perf_counter()
    report = Report("printq")
    report.figure(f"printq benchmark (seed {SEED}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]})")
    bench_cli_vs_jq(report, args.runs)
    bench_http(report, args.requests, args.clients, args.threads)
    bench_scale(report, args.records)
    report.figure()
    report.figure(f"total benchmark time: {time.perf_counter() - started:.0f} s")
    report.finish(args.report)


if __name__ == "__main__":
    main()
