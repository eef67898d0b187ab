"""Span trees, delete, tags and scores through a server print what they print on the database,
odd session ids and errors included."""

from __future__ import annotations

import json

import pytest

from obsctl.services.ingest import ingest_events
from tests.store_support import open_any

ODD = "team/run 7"


def _traced(sid: str) -> list[dict]:
    return [
        {"session_id": sid, "event_type": "session_start", "agent_name": "bot", "event_id": f"{sid}:0",
         "timestamp": "2026-03-01T10:00:00.000Z", "tags": {"team": "support"}},
        {"session_id": sid, "event_type": "agent_step", "event_id": f"{sid}:1", "duration_ms": 2000,
         "timestamp": "2026-03-01T10:00:00.100Z"},
        {"session_id": sid, "event_type": "llm_call", "event_id": f"{sid}:2", "parent_id": f"{sid}:1",
         "duration_ms": 900, "model": "gpt-4o", "timestamp": "2026-03-01T10:00:00.200Z"},
        {"session_id": sid, "event_type": "tool_call", "event_id": f"{sid}:3", "parent_id": f"{sid}:9",
         "duration_ms": 5, "timestamp": "2026-03-01T10:00:01.000Z"},
    ]


@pytest.fixture(scope="module", autouse=True)
def traced(remote):
    store = open_any(remote.db_url)
    try:
        for sid in (ODD, "..", "del-local", "del-remote"):
            ingest_events(store, _traced(sid))
    finally:
        store.close()


@pytest.mark.parametrize("args", [
    ("sessions", "show", ODD, "--tree"),
    ("sessions", "show", "..", "--tree", "--json"),
    ("sessions", "show", ODD, "--json"),
    ("explain", ODD, "--raw"),
    ("sessions", "tag", ODD, "tier=gold", "stale="),
    ("sessions", "tag", "..", "--remove", "team", "--json"),
    ("sessions", "list", "--tag", "tier=gold", "--json"),
    ("sessions", "list", "--tag", "team=support", "--tag", "tier=gold"),
    ("sessions", "list", "--tag", "tier"),
    ("sessions", "tag", "no-such-session", "k=v"),
    ("sessions", "tag", ODD, "bad key=v"),
    ("sessions", "score", "no-such-session", "helpfulness", "1"),
    ("sessions", "score", ODD, "bad name", "1"),
    ("sessions", "delete", "no-such-session", "--yes"),
    ("sessions", "delete", ODD),
])
def test_prints_the_same(remote, args):
    remote.same(*args)


def test_a_score_prints_the_same_but_for_its_id_and_time(remote):
    result = remote.same("sessions", "score", ODD, "helpfulness", "0.5", "--comment", "ok", "--json",
                         volatile=("score_id", "created_at"))
    assert result.exit_code == 0 and json.loads(result.stdout)["session_id"] == ODD
    shown = json.loads(remote.remote("sessions", "show", ODD, "--json").stdout)
    assert [s["value"] for s in shown["scores"]] == [0.5, 0.5]


def test_a_delete_prints_the_same(remote):
    here = remote.local("sessions", "delete", "del-local", "--yes", "--json")
    there = remote.remote("sessions", "delete", "del-remote", "--yes", "--json")
    assert (here.exit_code, there.exit_code) == (0, 0)
    assert json.loads(there.stdout) == {**json.loads(here.stdout), "session_id": "del-remote"}
    assert json.loads(here.stdout) == {"deleted": True, "session_id": "del-local", "events_deleted": 4}
    assert remote.remote("sessions", "show", "del-local").exit_code == 1
