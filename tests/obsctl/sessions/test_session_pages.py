"""A session's events in pages: `GET /sessions/<id>` answers all of them up to 10,000 and
beyond that a page with a `next` cursor (docs/decisions.md); `limit` and `cursor` walk them,
in the HTTP API, the CLI and the dashboard, on both stores."""

from __future__ import annotations

import json

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import EVENTS_LIMIT, get_session
from tests.conftest import event


def _seed(db, count: int, session_id: str = "big") -> list[str]:
    """`count` events, in pairs sharing a timestamp (ties come in the order they were stored)."""
    ids = [f"e{i:05d}" for i in range(count)]
    for start in range(0, count, 1000):
        ingest_events(db, [event(session_id, "llm_call" if i % 7 else "tool_call", event_id=ids[i],
                                 timestamp=_at(i // 2))
                           for i in range(start, min(count, start + 1000))])
    return ids


def _at(second: int) -> str:
    return f"2026-03-01T{10 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"


def _walk(client, path: str, **params) -> tuple[list[str], int]:
    """Every event id of a session, page after page, and the number of pages."""
    seen, pages, cursor = [], 0, None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        body = client.get(path, query_string=query).get_json()
        seen += [e["event_id"] for e in body["events"]]
        pages += 1
        cursor = body["next"]
        if cursor is None:
            return seen, pages


def test_pages_of_a_session_are_its_events_in_order_once(db, client):
    ids = _seed(db, 25)
    whole = client.get("/sessions/big").get_json()
    assert [e["event_id"] for e in whole["events"]] == ids and whole["next"] is None
    assert _walk(client, "/sessions/big", limit=10) == (ids, 3)
    assert _walk(client, "/sessions/big", limit=1) == (ids, 25)


def test_a_page_is_the_same_events_as_the_whole_answer(db, client):
    _seed(db, 12)
    whole = client.get("/sessions/big").get_json()
    first = client.get("/sessions/big?limit=5").get_json()
    assert first["events"] == whole["events"][:5] and first["next"]
    assert {k: v for k, v in first.items() if k not in ("events", "next")} == \
        {k: v for k, v in whole.items() if k not in ("events", "next")}
    second = client.get(f"/sessions/big?limit=5&cursor={first['next']}").get_json()
    assert second["events"] == whole["events"][5:10]


def test_a_tree_page_nests_the_events_of_that_page(db, client):
    ingest_events(db, [event("t", "agent_step", event_id="root", timestamp="2026-03-01T10:00:00Z"),
                       event("t", event_id="call", parent_id="root", timestamp="2026-03-01T10:00:01Z"),
                       event("t", "tool_call", event_id="tool", parent_id="root", timestamp="2026-03-01T10:00:02Z")])
    first = client.get("/sessions/t?tree=true&limit=2").get_json()
    assert [(n["event_id"], [c["event_id"] for c in n["children"]]) for n in first["events"]] == [("root", ["call"])]
    rest = client.get(f"/sessions/t?tree=true&cursor={first['next']}").get_json()
    assert [n["event_id"] for n in rest["events"]] == ["tool"] and rest["next"] is None


@pytest.mark.sqlite_only  # 10,050 events: built once, on the store the suite builds fastest
def test_beyond_ten_thousand_events_the_answer_is_a_page_with_next(db, client):
    ids = _seed(db, EVENTS_LIMIT.high + 50)
    first = client.get("/sessions/big").get_json()
    assert len(first["events"]) == 10_000 and first["event_count"] == 10_050 and first["next"]
    rest = client.get(f"/sessions/big?cursor={first['next']}").get_json()
    assert [e["event_id"] for e in first["events"] + rest["events"]] == ids and rest["next"] is None
    # A larger limit counts as the largest page, as the session list's does.
    assert len(client.get("/sessions/big?limit=1000000").get_json()["events"]) == 10_000


@pytest.mark.parametrize("query,message", [
    ("limit=0", "limit must be an integer from 1 to 10000 (a larger limit counts as 10000); got 0"),
    ("cursor=nope", "cursor is not one this session's events gave"),
    ("cursor=WyJ0b2tlbnMiLGZhbHNlLDEsInMiXQ", "cursor is not one this session's events gave"),
    ("cursor=WyJldmVudHMiLCJhXHUwMDAwIiwxXQ", "cursor is not one this session's events gave"),  # a NUL
    ("cursor=WyJldmVudHMiLCJhIiwxMDAwMDAwMDAwMDAwMDAwMDAwMDAwXQ", "cursor is not one this session's events gave"),
])
def test_a_bad_limit_or_cursor_is_a_400(db, client, query, message):
    _seed(db, 3)
    response = client.get(f"/sessions/big?{query}")
    assert response.status_code == 400 and response.get_json()["error"].startswith(message)


def test_the_cli_shows_a_page_and_where_the_next_one_starts(db, cli, terminal):
    ids = _seed(db, 5)
    shown = cli("sessions", "show", "big", "--limit", "2")
    assert shown.exit_code == 0 and ids[1] not in shown.stdout  # the table has no event ids
    assert "more of its 5 events: --cursor " in shown.stderr
    cursor = shown.stderr.split("--cursor ")[1].split()[0]
    page = json.loads(cli("sessions", "show", "big", "--cursor", cursor, "--json").stdout)
    assert [e["event_id"] for e in page["events"]] == ids[2:] and page["next"] is None
    assert get_session(db, "big", limit=2, cursor=cursor)["events"] == page["events"][:2]


def test_the_cli_refuses_a_cursor_it_cannot_read_before_opening_anything(cli):
    result = cli("sessions", "show", "big", "--cursor", "nope")
    assert result.exit_code == 2 and "Invalid value for '--cursor'" in result.stderr


def test_the_dashboard_reads_only_the_events_it_shows(db, client, monkeypatch, backend):
    import importlib

    from obsctl.web.ui import views

    monkeypatch.setattr(views, "SHOWN_EVENTS", 4)
    _seed(db, 9)
    asked = []
    module = importlib.import_module(f"obsctl.store.{'sqlite' if backend == 'sqlite' else 'postgres'}.sessions")
    original = module.session_events_page
    monkeypatch.setattr(module, "session_events_page", lambda *args: asked.append(args[-1]) or original(*args))
    page = client.get("/ui/sessions/big")
    assert page.status_code == 200
    assert "The first 4 events are shown; 5 more are in the export." in page.get_data(as_text=True)
    assert asked == [5]  # the page and one more, never the whole session
