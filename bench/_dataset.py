"""Seeded synthetic agent events for the benchmarks, and the cached 1M-event database.

`generate_events` yields realistic events (prompts, outputs, tool calls, decisions, a few
percent errors) for sessions spread over the last `days` days. `bench_db_path()` builds the
shared 1M-event / 20k-session database once (through the real ingest service) and caches it
under bench/.cache/, keyed by the generator version and parameters.
"""

from __future__ import annotations

import os
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GENERATOR_VERSION = 1
CACHE_DIR = Path(os.environ.get("OBSCTL_BENCH_CACHE", ROOT / "bench" / ".cache"))
# BENCH_SMALL=1 (see _report.py): a 20k-event database instead of 1M, to check the mechanism.
SHARED_SESSIONS = 400 if os.environ.get("BENCH_SMALL", "") not in ("", "0") else 20_000

MODELS = ["gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet-20241022", "claude-3-5-haiku-20241022",
          "gemini-1.5-pro", "in-house-llm-v2"]
TOOLS = ["web_search", "fetch_url", "code_exec", "db_query", "send_email", "read_file"]
WORDS = ["the", "agent", "should", "summarise", "quarterly", "revenue", "figures", "and", "check", "the", "customer", "record", "for", "anomalies", "before", "drafting", "a", "reply", "with", "the", "refund", "policy", "and", "shipping", "status"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generate_events(n_sessions: int, events_per_session: int = 50, *, seed: int = 42,
                    agents: int = 20, days: int = 30, now: datetime | None = None):
    """Yield event dicts: per session a session_start, events, and a session_end."""
    rng = random.Random(seed)
    now = now or datetime.now(UTC)
    span = days * 86400
    for s in range(n_sessions):
        agent = f"agent-{s % agents:02d}"
        sid = f"sess-{seed}-{s:07d}"
        start = now - timedelta(seconds=rng.uniform(3600, span))
        t = start
        yield {"event_type": "session_start", "session_id": sid, "agent_name": agent,
               "event_id": f"{sid}-start", "timestamp": _iso(t),
               "metadata": {"user": f"user-{rng.randrange(500)}", "env": "prod"}}
        failed = False
        for i in range(events_per_session - 2):
            t += timedelta(milliseconds=rng.randint(50, 4000))
            roll = rng.random()
            ev = {"session_id": sid, "event_id": f"{sid}-{i:04d}", "timestamp": _iso(t),
                  "agent_name": agent}
            if roll < 0.45:
                model = MODELS[(s + i) % len(MODELS)] if rng.random() < 0.8 else rng.choice(MODELS)
                ev.update(event_type="llm_call", model=model,
                          tokens_in=rng.randint(200, 4000), tokens_out=rng.randint(20, 800),
                          duration_ms=round(rng.lognormvariate(6.5, 0.6), 1),
                          input_data={"prompt": _text(rng, 40)},
                          output_data={"text": _text(rng, 25)})
            elif roll < 0.80:
                tool = rng.choice(TOOLS)
                call = {"name": tool, "input": {"q": _text(rng, 6)}, "output": {"ok": True, "n": rng.randint(0, 50)}}
                ev.update(event_type="tool_call", tool_call=call,
                          duration_ms=round(rng.lognormvariate(5.0, 0.9), 1))
                if rng.random() < 0.04:
                    call["error"] = f"{tool} failed: HTTP 503 after {rng.randint(1, 30)}s"
                    call.pop("output")
                    failed = True
            elif roll < 0.97:
                ev.update(event_type="decision",
                          decision_trace={"reasoning": _text(rng, 20), "choice": rng.choice(TOOLS)},
                          duration_ms=round(rng.uniform(1, 30), 1))
            else:
                kind = rng.choice(["rate_limit", "timeout", "llm_error"])
                ev.update(event_type=kind, model=rng.choice(MODELS),
                          output_data={"error": f"{kind}: retry after {rng.randint(1, 60)}s"},
                          duration_ms=round(rng.uniform(100, 30000), 1))
                failed = True
            yield ev
        t += timedelta(milliseconds=rng.randint(10, 500))
        status = "error" if failed and rng.random() < 0.5 else "completed"
        if rng.random() < 0.03:
            continue  # a few sessions never end (still active)
        yield {"event_type": "session_end", "session_id": sid, "event_id": f"{sid}-end",
               "timestamp": _iso(t), "status": status}


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def write_jsonl(path: Path, n_sessions: int, events_per_session: int = 50, seed: int = 7) -> int:
    import orjson

    count = 0
    with open(path, "wb") as out:
        for ev in generate_events(n_sessions, events_per_session, seed=seed):
            out.write(orjson.dumps(ev) + b"\n")
            count += 1
    return count


def bench_db_path(n_sessions: int | None = None, events_per_session: int = 50, seed: int = 42) -> Path:
    """The cached benchmark database (built on first use; about a minute for 1M events)."""
    n_sessions = n_sessions or SHARED_SESSIONS
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path = CACHE_DIR / f"bench-v{GENERATOR_VERSION}-{n_sessions}x{events_per_session}-s{seed}.db"
    if path.exists():
        return path
    from obsctl.services.ingest import store_events, validate_events
    from obsctl.store.sqlite.db import open_db
    from obsctl.store.sqlite.sqlite_store import store_over

    tmp = path.with_suffix(".building")
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    started = time.perf_counter()
    print(f"building benchmark database {path.name} ...", file=sys.stderr)
    db = open_db(tmp)
    store = store_over(db)
    batch = []
    total = 0
    for ev in generate_events(n_sessions, events_per_session, seed=seed):
        batch.append(ev)
        if len(batch) == 5000:
            valid, errors = validate_events(batch)
            assert not errors, errors[:3]
            store_events(store, valid)
            total += len(batch)
            batch = []
    if batch:
        valid, errors = validate_events(batch)
        store_events(store, valid)
        total += len(batch)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("ANALYZE")
    db.close()
    os.replace(tmp, path)
    print(f"built {total} events in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return path


def fresh_copy(dest_dir: Path) -> Path:
    """A private copy of the benchmark database, for benchmarks that write to it."""
    import shutil

    src = bench_db_path()
    dest = Path(dest_dir) / src.name
    shutil.copyfile(src, dest)
    return dest


if __name__ == "__main__":
    print(bench_db_path())
