"""A long session (more than ANALYSIS_EVENTS events) is triaged from SQL aggregates and bounded
reads (services/triage/long.py): the reports are the ones a whole read gives.

Each session here is analysed both ways, the long way forced by lowering the threshold, and
the triage report and postmortem compared in full; the long session is past the threshold for
real, so its postmortem is the bounded one (timeline and cascades) either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import obsctl.services.triage.analysis as analysis
from obsctl.services.ingest import ingest_events
from obsctl.services.postmortem import postmortem_session
from obsctl.services.triage import triage_session
from tests import triage_scenarios as sc

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = (sc.rate_limit_cascade, sc.runaway_loop, sc.steady_baseline, sc.token_spike, sc.clean_session,
             sc.slow_tool, sc.expensive_model_switch, sc.gave_up_after_a_loop)


@pytest.fixture
def pricer(tmp_path):
    return sc.pricer(tmp_path)


def both_ways(db, session_id: str, pricer, monkeypatch) -> tuple[tuple, tuple]:
    """((triage, postmortem) read whole, (triage, postmortem) the long way)."""
    def reports():
        post = postmortem_session(db, session_id, pricer=pricer)
        post["markdown"] = post["markdown"].replace(post.pop("generated_at"), "<generated>")
        return triage_session(db, session_id, pricer=pricer), post

    with monkeypatch.context() as m:
        m.setattr(analysis, "ANALYSIS_EVENTS", 10**9)
        whole = reports()
    with monkeypatch.context() as m:
        m.setattr(analysis, "ANALYSIS_EVENTS", -1)
        calls = []
        original = analysis.analyse_long
        m.setattr(analysis, "analyse_long", lambda *a: calls.append(1) or original(*a))
        long = reports()
        assert calls, "the long analysis was not used"
    return whole, long


def test_every_scenario_reads_the_same_the_long_way(db, pricer, monkeypatch):
    for build in SCENARIOS:
        build(db)
    ids = [row[0] for row in db.conn.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall()]
    assert len(ids) >= 10
    for session_id in ids:
        whole, long = both_ways(db, session_id, pricer, monkeypatch)
        assert long == whole, session_id


def test_the_demo_sessions_read_the_same_the_long_way(db, pricer, monkeypatch):
    events = [json.loads(line) for line in (ROOT / "examples" / "demo-events.jsonl").read_text().splitlines()]
    ingest_events(db, events)
    ids = [row[0] for row in db.conn.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall()]
    assert len(ids) >= 10
    for session_id in ids:
        whole, long = both_ways(db, session_id, pricer, monkeypatch)
        assert long == whole, session_id


def long_session(db, sid: str = "marathon", cycles: int = 2100) -> None:
    """An agent that ran for hours: 6 events a cycle (an LLM call, a search, a fetch, a
    decision, a fetch and another LLM call), every 50th cycle a rate limit on the model that
    the agent answers by falling back to the other model, every 300th a search timeout; a
    run of 12 identical fetches in the middle, slow fetches near the end, and a final error."""
    e = {"session_id": sid}
    events = [{**e, "event_type": "session_start", "agent_name": "marathon", "event_id": "m-start",
               "timestamp": sc.ts(0)}]
    t = 0.0

    def add(**fields):
        nonlocal t
        t += 0.25
        events.append({**e, "event_id": f"m-{len(events)}", "timestamp": sc.ts(t), **fields})

    for c in range(cycles):
        model = "gpt-4o" if c % 2 else "in-house-llm"
        if c % 50 == 49:
            add(event_type="rate_limit", model=model, output_data={"error": f"Rate limit exceeded (request r{c})"})
            model = "in-house-llm" if model == "gpt-4o" else "gpt-4o"
        add(event_type="llm_call", model=model, tokens_in=400 + c % 17, tokens_out=60, duration_ms=800 + c % 40)
        search = {"name": "web_search", "input": {"q": f"topic {c}"}, "output": {"hits": c % 5}}
        if c % 300 == 299:
            search["error"] = "web_search timed out after 30000 ms"
        add(event_type="tool_call", duration_ms=30000 if "error" in search else 200 + c % 30, tool_call=search)
        slow = cycles - 40 <= c < cycles - 30
        add(event_type="tool_call", duration_ms=9000 if slow else 300 + c % 20,
            tool_call={"name": "fetch_url", "input": {"url": f"https://example.test/{c}"}, "output": {"ok": True}})
        add(event_type="decision", decision_trace={"reasoning": f"step {c}"})
        if c == cycles // 2:
            for _ in range(12):
                add(event_type="tool_call", duration_ms=150,
                    tool_call={"name": "fetch_url", "input": {"url": "https://example.test/same"},
                               "output": {"status": 503}})
        add(event_type="llm_call", model=model, tokens_in=100, tokens_out=20, duration_ms=500)
    add(event_type="error", output_data={"error": "Max iterations (5000) reached"})
    events.append({**e, "event_type": "session_end", "status": "error", "event_id": "m-end", "timestamp": sc.ts(t + 1)})
    ingest_events(db, events)


def test_a_long_session_reads_the_same_both_ways(db, pricer, monkeypatch):
    long_session(db)
    [(count,)] = db.conn.execute("SELECT event_count FROM sessions WHERE session_id = 'marathon'").fetchall()
    assert count > analysis.ANALYSIS_EVENTS
    whole, long = both_ways(db, "marathon", pricer, monkeypatch)
    assert long == whole
    triage, post = long
    metrics = triage["metrics"]
    assert (metrics["event_count"], metrics["body_events"], metrics["error_events"]) == (count, count - 2, 50)
    # 42 rate limits, 7 search timeouts and the last error: counted over the whole session, and grouped
    assert sorted((g["kind"], g["count"]) for g in triage["error_groups"]) == [
        ("other", 1), ("rate_limit", 42), ("timeout", 7)]
    [loop] = triage["loops"]
    assert (loop["tool_name"], loop["count"], loop["input"]) == ("fetch_url", 12, '{"url":"https://example.test/same"}')
    latency = [f for f in triage["findings"] if f["category"] == "latency"]
    assert [(f["evidence"]["tool_name"], f["evidence"]["slow_events"]) for f in latency] == [("fetch_url", 10)]
    errors_finding = next(f for f in triage["findings"] if f["category"] == "errors")
    assert "falls back" in errors_finding["suggestion"] or any(
        "falls back" in f["suggestion"] for f in triage["findings"])
    tools = {t["tool_name"]: t for t in triage["tools"]}
    assert (tools["web_search"]["calls"], tools["web_search"]["failures"]) == (2100, 7)
    assert tools["fetch_url"]["calls"] == 2100 + 12
    # the postmortem's timeline is bounded: the first and last 1,000 events and the errors between
    assert post["timeline_left_out"] == count - len(post["timeline"]) > 0
    assert [e["number"] for e in post["timeline"][:3]] == [1, 2, 3]
    assert post["timeline"][-1]["number"] == count
    middle = post["timeline"][1000:-1000]
    assert middle and all(e["is_error"] for e in middle)
    assert post["error_cascade"]["total_errors"] == 50


def test_a_long_session_with_more_errors_than_analysed_counts_them_all(db, pricer, monkeypatch):
    """Errors beyond ERRORS_ANALYSED are counted in every rate and total, and left out of the
    groups and cascades, which say how many they cover."""
    monkeypatch.setattr("obsctl.services.triage.long.ERRORS_ANALYSED", 10)
    ingest_events(db, [{"session_id": "e", "event_type": "tool_call", "timestamp": sc.ts(i), "event_id": f"e{i}",
                        "tool_call": {"name": "t", "input": {"i": i}, "error": "boom"}} for i in range(30)])
    monkeypatch.setattr(analysis, "ANALYSIS_EVENTS", -1)
    triage = triage_session(db, "e", pricer=pricer)
    assert triage["metrics"]["error_events"] == 30
    assert sum(g["count"] for g in triage["error_groups"]) == 10
    monkeypatch.setattr("obsctl.services.postmortem.factors.CASCADE_ERRORS_SHOWN", 4)
    post = postmortem_session(db, "e", pricer=pricer)
    assert post["error_events"] == 30 and post["error_cascade"]["total_errors"] == 30
    [cascade] = post["error_cascade"]["cascades"]
    assert (cascade["length"], len(cascade["errors"])) == (10, 4)


def test_a_long_sessions_postmortem_lists_its_longest_cascades(db, pricer, monkeypatch):
    monkeypatch.setattr("obsctl.services.postmortem.factors.CASCADES_SHOWN", 2)
    events = []
    for i, run in enumerate((1, 3, 1, 2, 4, 1)):  # six cascades, apart by 5 successful calls
        events += [{"session_id": "c", "event_type": "timeout", "timestamp": sc.ts(100 * i + j),
                    "event_id": f"c{i}-e{j}"} for j in range(run)]
        events += [{"session_id": "c", "event_type": "llm_call", "timestamp": sc.ts(100 * i + 50 + j),
                    "event_id": f"c{i}-ok{j}"} for j in range(5)]
    ingest_events(db, events)
    whole = postmortem_session(db, "c", pricer=pricer)["error_cascade"]
    assert [c["length"] for c in whole["cascades"]] == [1, 3, 1, 2, 4, 1]
    monkeypatch.setattr(analysis, "ANALYSIS_EVENTS", -1)
    long = postmortem_session(db, "c", pricer=pricer)["error_cascade"]
    assert [(c["cascade"], c["length"]) for c in long["cascades"]] == [(2, 3), (5, 4)]
    assert (long["cascades_left_out"], long["longest"], long["total_errors"]) == (4, 4, 12)



def test_a_long_session_in_a_file_is_read_on_three_connections(tmp_path, pricer, monkeypatch):
    """A store over a file reads a long session's tool calls and errors on two more threads,
    each with its own read-only connection (store.side_reader): the same reports."""
    import contextlib
    import threading

    from obsctl.store import open_store
    from obsctl.store.sqlite.sqlite_store import SqliteStore

    store = open_store(tmp_path / "obsctl.db")
    long_session(store)
    sides = []
    original = SqliteStore.side_reader

    @contextlib.contextmanager
    def recorded(self):
        with original(self) as side:
            sides.append((side, threading.current_thread()))
            yield side

    monkeypatch.setattr(SqliteStore, "side_reader", recorded)
    whole, long = both_ways(store, "marathon", pricer, monkeypatch)
    assert long == whole and long[0]["loops"][0]["count"] == 12
    # triage and the postmortem: the tool calls and the errors of each, on other threads and
    # connections than the store's
    assert len(sides) == 4
    assert all(side is not None and side is not store and side.path == store.path
               and thread is not threading.main_thread() for side, thread in sides)
    store.close()


def test_a_long_sessions_durations_read_back_exactly(db):
    """The breakdown's durations (one text aggregate per group, parsed at once) are the values
    a whole read gives, to the last bit, integers as integers."""
    values = [0.1, 1e-07, 12345.678901234567, 2.5, 7, 19999.999999999996, 0.30000000000000004, 3]
    ingest_events(db, [{"session_id": "d", "event_id": f"d{i}", "event_type": "llm_call", "model": "m",
                        "timestamp": sc.ts(i), "duration_ms": v} for i, v in enumerate(values)])
    [row] = db.triage.session_breakdown("d")
    whole = [row[7] for row in db.triage.session_steps("d")]
    assert sorted(row[8]) == sorted(whole) == sorted(values)
    assert sorted(type(v).__name__ for v in row[8]) == sorted(type(v).__name__ for v in whole)
