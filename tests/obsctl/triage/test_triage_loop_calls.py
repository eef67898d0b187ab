"""A long session's loop detection reads only the tool calls that can change what it finds
(store/long_session_sql.tool_calls: calls whose key the session has fewer than 5 times are
left out, but for the last successful one before a call that can loop). These tests hold
it to the loops found over every call of the session, on generated sessions with many
tools and inputs, and to the stored keys (events.tool_key) of ingest."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import obsctl.store.long_session_sql as long_sql
from obsctl.services.call_keys import call_key
from obsctl.services.ingest import ingest_events
from obsctl.services.triage import long
from obsctl.services.triage.facts import find_loops, step_of
from tests.store_support import open_db

TOOLS = ["search", "fetch", "read"]
INPUTS = [{"q": 1}, {"q": 2}, {"a": 1, "b": [1, 2]}, "plain text", None]
OUTPUTS = [None, {"hits": 1}, {"hits": 2}]


@st.composite
def calls(draw):
    """One event: mostly tool calls of a few tools and inputs (so that some keys repeat 5 times
    or more and others do not), some failing, some model calls between."""
    if draw(st.integers(0, 5)) == 0:
        return {"event_type": "llm_call", "model": "gpt-4o", "tokens_in": 1}
    tool_input = draw(st.sampled_from(INPUTS))
    call = {"name": draw(st.sampled_from(TOOLS))}
    if tool_input is not None:
        # The same input, with its keys in another order now and then.
        call["input"] = dict(reversed(tool_input.items())) if isinstance(tool_input, dict) and draw(
            st.booleans()) else tool_input
    output = draw(st.sampled_from(OUTPUTS))
    if output is not None:
        call["output"] = output
    if draw(st.integers(0, 3)) == 0:
        call["error"] = "failed"
    return {"event_type": "tool_call", "tool_call": call, "duration_ms": draw(st.integers(1, 9))}


def _loops_of_every_call(db) -> tuple[list, list]:
    steps = [step_of(i, row) for i, row in enumerate(db.triage.session_steps("s"))]
    tools = [s for s in steps if s.tool_name is not None and not s.lifecycle]
    return find_loops(tools), find_loops([s for s in tools if not s.is_error])


def _seen(loops) -> list[tuple]:
    return [(x.tool_name, x.tool_input, x.first.event_id, x.last.event_id, x.count, x.failures, x.tool_ms,
             x.identical_outputs) for x in loops]


def _tool(name, fails=False):
    call = {"name": name, "input": {"q": 1}} | ({"error": "failed"} if fails else {})
    return {"event_type": "tool_call", "tool_call": call, "duration_ms": 1}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls(), min_size=0, max_size=120))
# Of two successful calls in a row that cannot loop, the second is kept: here it is the run
# that the failed calls after it wait behind until a call of another tool ends it.
@example([_tool("one"), _tool("two"), _tool("a", True), _tool("a", True), _tool("two"), _tool("a", True),
          _tool("a", True), _tool("a", True), _tool("three")])
def test_the_calls_left_out_change_no_loop(events):
    db = open_db(":memory:")
    ingest_events(db, [{"session_id": "s", "event_id": f"e{i}", "timestamp": f"2026-11-01T00:00:{i // 10:02d}.{i % 10}00Z",
                        **event} for i, event in enumerate(events)])
    expected = [_seen(x) for x in _loops_of_every_call(db)]
    # the reduced read (whatever the share of calls that repeat), then every call read
    for share in (2, 0):
        original, long_sql.WHOLE_READ_SHARE = long_sql.WHOLE_READ_SHARE, share
        try:
            assert [_seen(x) for x in long._loops(db, "s")] == expected, share
        finally:
            long_sql.WHOLE_READ_SHARE = original


def test_ingest_stores_each_tool_calls_key_whatever_the_order_of_its_input(db):
    ingest_events(db, [
        {"session_id": "s", "event_id": "a", "event_type": "tool_call", "tool_call": {"name": "t", "input": {"x": 1, "y": 2}}},
        {"session_id": "s", "event_id": "b", "event_type": "tool_call", "tool_call": {"tool_name": "t", "tool_input": {"y": 2, "x": 1}}},
        {"session_id": "s", "event_id": "c", "event_type": "tool_call", "tool_call": {"name": "t", "input": {"x": 2, "y": 1}}},
        {"session_id": "s", "event_id": "d", "event_type": "llm_call", "model": "m"},
    ])
    keys = dict(db.conn.execute("SELECT event_id, tool_key FROM events WHERE session_id = ?", ["s"]).fetchall())
    assert keys["a"] == keys["b"] == call_key("t", {"input": {"x": 1, "y": 2}})
    assert keys["c"] != keys["a"] and keys["d"] is None


def test_a_session_stored_without_keys_finds_the_same_loops(db):
    """Calls stored before m034 have no key: the session's calls are all read, with their JSON."""
    events = [{"session_id": "s", "event_id": f"e{i}", "event_type": "tool_call",
               "timestamp": f"2026-11-01T00:00:{i:02d}.000Z",
               "tool_call": {"name": "poll", "input": {"job": 7} if i % 7 else {"job": i}, "output": {"state": "running"}}}
              for i in range(30)]
    ingest_events(db, events)
    with_keys = _seen(long._loops(db, "s")[0])
    db.conn.execute("UPDATE events SET tool_key = NULL WHERE event_id IN (?, ?)", ["e3", "e20"])
    assert _seen(long._loops(db, "s")[0]) == with_keys == _seen(_loops_of_every_call(db)[0])
    assert [x[4] for x in with_keys] == [13, 6, 6]  # e0, e14, e21 and e28 call with another job
