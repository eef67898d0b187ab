"""Span trees: `sessions show --tree`, `GET /sessions/<id>?tree=true` and explain's call tree."""

from __future__ import annotations

import json

import orjson
import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import get_session
from obsctl.services.sessions.explain import explain_session
from obsctl.services.sessions.tree import MAX_DEPTH, build_tree, walk
from tests.conftest import event


def ev(event_id: str, ms: int, duration: float | None = None, parent: str | None = None, **fields) -> dict:
    return {"event_id": event_id, "parent_id": parent, "duration_ms": duration,
            "timestamp": f"2026-03-01T10:00:{ms // 1000:02d}.{ms % 1000:03d}Z", **fields}


def shape(roots: list[dict]) -> list:
    """(event_id, self_time_ms, children's shape) of each node."""
    return [(n["event_id"], n["self_time_ms"], shape(n["children"])) for n in roots]


def test_children_nest_under_their_parents_with_self_time():
    # agent 0-3000 ms; llm 100-1100 with a tool 400-700; two tools 900-1700 and 1000-1500
    # overlapping each other and the llm: the union of the agent's children is 100-1700.
    events = [ev("agent", 0, 3000), ev("llm", 100, 1000, "agent"), ev("search", 400, 300, "llm"),
              ev("crm", 900, 800, "agent"), ev("db", 1000, 500, "agent")]
    assert shape(build_tree(events)) == [
        ("agent", 1400.0, [("llm", 700.0, [("search", 300.0, [])]), ("crm", 800.0, []), ("db", 500.0, [])]),
    ]


def test_a_child_reaching_past_its_parent_counts_only_inside_it():
    events = [ev("p", 0, 1000), ev("c", 800, 500, "p"), ev("untimed", 100, None, "p")]
    assert shape(build_tree(events)) == [("p", 800.0, [("c", 500.0, []), ("untimed", None, [])])]


def test_orphans_self_parents_and_cycles_are_roots_and_every_event_shows_once():
    events = [ev("a", 0, 10, "not-here"), ev("b", 1, 10, "c"), ev("c", 2, 10, "b"), ev("d", 3, 10, "d"),
              ev("e", 4, 10, "c")]
    roots = build_tree(events)
    # b (1-11 ms) holds c (2-12, counted 2-11); c holds e (4-14, counted 4-12).
    assert shape(roots) == [("a", 10.0, []), ("b", 1.0, [("c", 2.0, [("e", 10.0, [])])]), ("d", 10.0, [])]
    assert [n["parent_id"] for n in roots] == ["not-here", "c", "d"]
    assert sorted(n["event_id"] for _, n in walk(roots)) == ["a", "b", "c", "d", "e"]


def test_a_parent_arriving_after_its_child_still_adopts_it():
    # Clocks disagree: the child is stamped before its parent; it nests all the same.
    roots = build_tree([ev("child", 5, 1, "late"), ev("late", 9, None)])
    assert shape(roots) == [("late", None, [("child", 1.0, [])])]
    roots = build_tree([ev("late", 0, 20), ev("child", 5, 1, "late")])
    assert shape(roots) == [("late", 19.0, [("child", 1.0, [])])]


def test_a_very_deep_chain_is_cut_at_the_depth_limit_and_encodes():
    events = [ev(f"e{i}", i, 1, f"e{i - 1}" if i else None) for i in range(1000)]
    roots = build_tree(events)
    depths = [d for d, _ in walk(roots)]
    assert max(depths) == MAX_DEPTH and len(depths) == 1000
    assert len(roots) == 1000 // (MAX_DEPTH + 1) + 1
    orjson.dumps(roots)  # nesting within the encoder's limit


def _traced(db):
    ingest_events(db, [
        event("t", "session_start", agent_name="bot", timestamp="2026-03-01T10:00:00.000Z", event_id="t0"),
        event("t", "agent_step", timestamp="2026-03-01T10:00:00.100Z", event_id="step", duration_ms=2000),
        event("t", "llm_call", timestamp="2026-03-01T10:00:00.200Z", event_id="llm", parent_id="step",
              duration_ms=900, model="gpt-4o", tokens_in=5, tokens_out=2),
        event("t", "tool_call", timestamp="2026-03-01T10:00:00.500Z", event_id="tool", parent_id="llm",
              duration_ms=250, tool_call={"name": "search", "error": "503"}),
        event("t", "llm_call", timestamp="2026-03-01T10:00:01.500Z", event_id="orphan", parent_id="gone",
              duration_ms=10),
    ])


def test_show_tree_json_equals_the_api_body_and_keeps_the_flat_form_by_default(db, cli, client):
    _traced(db)
    body = client.get("/sessions/t?tree=true").get_json()
    assert json.loads(cli("sessions", "show", "t", "--tree", "--json").stdout) == body
    assert shape(body["events"]) == [("t0", None, []),
                                     ("step", 1100.0, [("llm", 650.0, [("tool", 250.0, [])])]),
                                     ("orphan", 10.0, [])]
    flat = client.get("/sessions/t").get_json()
    assert [e["event_id"] for e in flat["events"]] == ["t0", "step", "llm", "tool", "orphan"]
    assert all("children" not in e and "self_time_ms" not in e for e in flat["events"])
    assert client.get("/sessions/t?tree=maybe").status_code == 400


def test_an_orphan_attaches_when_its_parent_arrives(db):
    _traced(db)
    assert [n["event_id"] for n in get_session(db, "t", tree=True)["events"]][-1] == "orphan"
    ingest_events(db, [event("t", "agent_step", timestamp="2026-03-01T10:00:01.400Z", event_id="gone",
                             duration_ms=200)])
    roots = get_session(db, "t", tree=True)["events"]
    assert shape(roots)[-1] == ("gone", 190.0, [("orphan", 10.0, [])])


def test_show_tree_on_a_terminal(db, cli, terminal):
    _traced(db)
    out = cli("sessions", "show", "t", "--tree").stdout
    lines = [line.rstrip() for line in out.splitlines()]
    tree = lines[lines.index("5 events"):]
    assert tree == [
        "5 events",
        "├── session_start",
        "├── agent_step  2,000 ms  (self 1,100 ms)",
        "│   └── llm_call  gpt-4o  900 ms  (self 650 ms)",
        "│       └── tool_call  search  250 ms",
        "└── llm_call  10 ms  parent gone not received",
    ]


def test_explain_shows_the_call_tree_when_events_name_parents(db):
    _traced(db)
    text = explain_session(db, "t")["explanation"]
    section = text[text.index("## Call tree"):text.index("## Summary")]
    assert section == (
        "## Call tree\n\n"
        "- #1 · `session_start`\n"
        "- #2 · `agent_step` · 2,000 ms · self 1,100 ms\n"
        "  - #3 · `llm_call` · model `gpt-4o` · 900 ms · self 650 ms\n"
        "    - #4 · `tool_call` · tool `search` · 250 ms · **❌ ERROR**\n"
        "- #5 · `llm_call` · 10 ms · _parent gone not received_\n\n"
    )


def test_explain_has_no_call_tree_without_parents(db):
    ingest_events(db, [event("flat", "llm_call", event_id="f1"), event("flat", "tool_call", event_id="f2")])
    assert "## Call tree" not in explain_session(db, "flat")["explanation"]


@pytest.mark.parametrize("parent", ["self", "cycle"])
def test_self_parenting_and_cycles_render_without_hanging(db, cli, parent):
    ids = ("x", "x") if parent == "self" else ("y", "x")
    ingest_events(db, [event("c", "a", event_id="x", parent_id=ids[0]),
                       event("c", "b", event_id="y", parent_id=ids[1])])
    assert cli("sessions", "show", "c", "--tree", "--json").exit_code == 0
    text = explain_session(db, "c")["explanation"]
    assert "## Call tree" in text
