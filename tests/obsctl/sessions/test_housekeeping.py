"""Deleting, tagging and scoring sessions: services, CLI and HTTP, on both backends.

The delete test holds the analytics rollups to exactness: after deleting a session they must
equal, row for row, those of a store that never had it (no rebuild in between)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from obsctl.errors import InvalidInput, NotFound
from obsctl.services.analytics import get_analytics
from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import get_session, list_sessions
from obsctl.services.sessions.housekeeping import delete_session, score_session, tag_session
from obsctl.timeutil import format_ts
from tests import backends
from tests.conftest import event
from tests.store_support import open_any

T0 = datetime.now(UTC).replace(hour=9, minute=0, second=0, microsecond=0) - timedelta(days=3)


def at(minutes: float) -> str:
    return format_ts(T0 + timedelta(minutes=minutes))


def _session(sid: str, agent: str, minute: float, *, status: str = "completed", model: str = "gpt-4o",
             tokens: int = 100, duration: float = 2.5, error: bool = False) -> list[dict]:
    events = [
        event(sid, "session_start", agent_name=agent, timestamp=at(minute), event_id=f"{sid}-0",
              tags={"team": "support"} if agent == "bot" else None),
        event(sid, "llm_call", model=model, tokens_in=tokens, tokens_out=tokens // 4, duration_ms=duration,
              timestamp=at(minute + 1), event_id=f"{sid}-1"),
        event(sid, "tool_call", tool_call={"name": "search", **({"error": "503"} if error else {})},
              duration_ms=0.25, timestamp=at(minute + 2), event_id=f"{sid}-2", parent_id=f"{sid}-1"),
        event(sid, "session_end", status=status, timestamp=at(minute + 3), event_id=f"{sid}-3"),
    ]
    return [{k: v for k, v in e.items() if v is not None} for e in events]


# A shares every rollup group with B (day, agent, status; event type, hour, model); B also has
# groups of its own (an error status, a model only it uses); C is ingested last.
A = _session("a", "bot", 0)
B = _session("b", "bot", 10, tokens=250, duration=7.75) + _session("b2-only", "bot", 10, model="claude-3",
                                                                      status="error", error=True)
C = _session("c", "planner", 20, model="claude-3", duration=1.5)


def _rollups(store) -> dict:
    """The rollup tables as rows (session_stats without emptied groups)."""
    conn = store.conn
    return {
        "event_stats": [tuple(r) for r in conn.execute(
            "SELECT event_type, hour, model, event_count, tokens_in, tokens_out, duration_sum, duration_count, "
            "ROUND(cost_usd * 1e9), priced_calls, unpriced_calls FROM event_stats ORDER BY 1, 2, 3").fetchall()],
        "session_stats": [tuple(r) for r in conn.execute(
            "SELECT day, agent_name, status, sessions, events, tokens_in, tokens_out, ended, duration_sum "
            "FROM session_stats WHERE sessions <> 0 ORDER BY 1, 2, 3").fetchall()],
        "events": conn.execute("SELECT events FROM event_totals").fetchone()[0],
    }


@pytest.fixture
def other_store(backend, tmp_path):
    """A second, empty store on the same backend."""
    schema = None
    if backend == "postgresql":
        schema, url = backends.new_schema()
    else:
        url = str(tmp_path / "other.db")
    store = open_any(url)
    yield store
    store.close()
    if schema:
        backends.drop_schema(schema)


def test_analytics_after_a_delete_equal_those_of_a_store_that_never_had_the_session(db, other_store):
    ingest_events(db, A)
    ingest_events(db, B)
    ingest_events(db, C)
    tag_session(db, "b", {"tier": "gold"})
    score_session(db, "b", {"name": "helpfulness", "value": 0.5})
    ingest_events(other_store, A)
    ingest_events(other_store, C)

    assert delete_session(db, "b") == {"deleted": True, "session_id": "b", "events_deleted": 4}
    assert delete_session(db, "b2-only")["events_deleted"] == 4

    # The rollups were adjusted, not rebuilt: current as they stand, and row for row the same.
    with db.read_snapshot():
        assert db.analytics.rollup_is_current()
    assert _rollups(db) == _rollups(other_store)
    assert get_analytics(db) == get_analytics(other_store)
    assert [s["session_id"] for s in list_sessions(db)["sessions"]] == ["c", "a"]
    for table in ("events", "session_tags", "session_scores"):
        assert db.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE session_id IN ('b', 'b2-only')").fetchone()[0] == 0


def test_deleting_an_unknown_session_is_not_found(db):
    with pytest.raises(NotFound, match="session 'nope' not found"):
        delete_session(db, "nope")


def test_a_deleted_session_can_be_ingested_again(db):
    ingest_events(db, A)
    delete_session(db, "a")
    result = ingest_events(db, A)
    assert (result.stored, result.duplicates) == (4, 0)
    assert get_session(db, "a")["event_count"] == 4


def test_tags_come_from_session_start_and_change_by_merge_patch(db):
    ingest_events(db, A)
    assert get_session(db, "a")["tags"] == {"team": "support"}
    assert tag_session(db, "a", {"tier": "gold", "team": None}) == {"session_id": "a", "tags": {"tier": "gold"}}
    assert tag_session(db, "a", {"tier": "silver", "env": "prod"})["tags"] == {"env": "prod", "tier": "silver"}
    # Removing a key the session does not have is no error.
    assert tag_session(db, "a", {"missing": None})["tags"] == {"env": "prod", "tier": "silver"}


@pytest.mark.parametrize("changes, message", [
    ({}, "the body must be an object of tag changes"),
    ({"bad key": "x"}, "tag key must be letters, digits"),
    ({"k": ""}, "tag 'k' must have a text value of 1 to 256 characters"),
    ({"k": 3}, "tag 'k' must have a text value"),
    ([], "the body must be an object"),
])
def test_bad_tag_changes_are_refused(db, changes, message):
    ingest_events(db, A)
    with pytest.raises(InvalidInput, match=message):
        tag_session(db, "a", changes)


def test_tags_of_a_session_start_are_validated_with_the_batch(db):
    with pytest.raises(InvalidInput) as caught:
        ingest_events(db, [event("x", "session_start", agent_name="bot", tags={"a:b": "c"})])
    assert caught.value.details[0]["field"] == "tags"
    assert list_sessions(db)["total"] == 0


def test_list_filters_on_every_tag_given(db):
    ingest_events(db, A + C)
    ingest_events(db, _session("d", "bot", 30))
    tag_session(db, "d", {"tier": "gold"})
    assert [s["session_id"] for s in list_sessions(db, tag=["team:support"])["sessions"]] == ["d", "a"]
    both = list_sessions(db, tag=["team:support", "tier=gold"])
    assert (both["total"], [s["session_id"] for s in both["sessions"]]) == (1, ["d"])
    assert list_sessions(db, tag="team:nobody") == {"sessions": [], "total": 0, "next": None}
    page = list_sessions(db, tag=["team:support"], limit=1, offset=1, status="completed")
    assert (page["total"], [s["session_id"] for s in page["sessions"]]) == (2, ["a"])
    with pytest.raises(InvalidInput, match="tag must be key:value"):
        list_sessions(db, tag=["team"])


def test_scores_are_recorded_and_shown(db):
    ingest_events(db, A)
    score = score_session(db, "a", {"name": "helpfulness", "value": 1, "comment": "solved it"})
    assert score["score_id"].startswith("score_") and score["value"] == 1.0
    score_session(db, "a", {"name": "accuracy", "value": -0.5})
    shown = get_session(db, "a")["scores"]
    # Both were given within the same millisecond or two: compared without their order.
    assert sorted((s["name"], s["value"], s["comment"]) for s in shown) == [
        ("accuracy", -0.5, None), ("helpfulness", 1.0, "solved it")]


@pytest.mark.parametrize("body, message", [
    ({"name": "h"}, "a score needs name and value"),
    ({"name": "h", "value": True}, "score value must be a finite number"),
    ({"name": "h", "value": "1"}, "score value must be a finite number"),
    ({"name": "h h", "value": 1}, "score name must be letters"),
    ({"name": "h", "value": 1, "stars": 5}, "unknown score field: stars"),
    ({"name": "h", "value": 1, "comment": 7}, "comment must be text"),
])
def test_bad_scores_are_refused(db, body, message):
    ingest_events(db, A)
    with pytest.raises(InvalidInput, match=message):
        score_session(db, "a", body)


def test_scoring_an_unknown_session_is_not_found(db):
    with pytest.raises(NotFound):
        score_session(db, "nope", {"name": "h", "value": 1})


# -- HTTP -------------------------------------------------------------------------------------

def test_http_delete_tag_score_and_filter(db, client):
    ingest_events(db, A + [dict(e, session_id="team/run 1", event_id="x" + e["event_id"]) for e in A])
    odd = "/sessions/team%2Frun%201"
    assert client.patch(f"{odd}/tags", json={"tier": "gold"}).get_json() == {
        "session_id": "team/run 1", "tags": {"team": "support", "tier": "gold"}}
    created = client.post(f"{odd}/scores", json={"name": "helpfulness", "value": 0.25})
    assert created.status_code == 201 and created.get_json()["session_id"] == "team/run 1"
    listed = client.get("/sessions?tag=tier:gold").get_json()
    assert [s["session_id"] for s in listed["sessions"]] == ["team/run 1"]
    assert client.get("/sessions?tag=tier").status_code == 400
    assert client.get(odd).get_json()["scores"][0]["value"] == 0.25
    assert client.delete(odd).get_json() == {"deleted": True, "session_id": "team/run 1", "events_deleted": 4}
    assert client.delete(odd).status_code == 404
    assert client.patch("/sessions/a/tags", data=b"[1]", content_type="application/json").status_code == 400
    assert client.post("/sessions/a/scores", json={"name": "h"}).status_code == 400


def test_sub_resources_written_raw_are_not_session_ids(db, client):
    ingest_events(db, [event("a"), event("a/explain"), event("a/tags")])
    for method, path in (("DELETE", "/sessions/a/explain"), ("GET", "/sessions/a/tags"),
                         ("DELETE", "/sessions/a/scores"), ("PUT", "/sessions/a/tags")):
        assert client.open(path, method=method).status_code == 405, (method, path)
    assert client.get("/sessions/a%2Ftags").get_json()["session_id"] == "a/tags"
    assert client.delete("/sessions/a%2Fexplain").get_json()["session_id"] == "a/explain"
    assert client.get("/sessions/a").status_code == 200


# -- CLI --------------------------------------------------------------------------------------

def test_cli_json_equals_http_body(db, cli, client):
    ingest_events(db, A + _session("a2", "bot", 40))
    tagged = cli("sessions", "tag", "a", "tier=gold", "team=", "--json")
    over_http = client.patch("/sessions/a2/tags", json={"tier": "gold", "team": None}).get_json()
    assert json.loads(tagged.stdout) == {**over_http, "session_id": "a"} == {"session_id": "a", "tags": {"tier": "gold"}}
    assert json.loads(cli("sessions", "list", "--tag", "tier=gold", "--json").stdout) == \
        client.get("/sessions?tag=tier:gold").get_json()
    assert json.loads(cli("sessions", "show", "a", "--json").stdout) == client.get("/sessions/a").get_json()


def test_cli_tag_remove_option_and_usage_errors(db, cli):
    ingest_events(db, A)
    assert cli("sessions", "tag", "a", "--remove", "team").stdout == "key\tvalue\n"
    bad = cli("sessions", "tag", "a", "oops")
    assert bad.exit_code == 2 and "'oops' is not key=value" in bad.stderr
    assert cli("sessions", "tag", "a").exit_code == 2
    assert cli("sessions", "list", "--tag", "nokey").exit_code == 2
    missing = cli("sessions", "tag", "nope", "k=v")
    assert (missing.exit_code, missing.stderr) == (1, "Error: session 'nope' not found\n")


def test_cli_score_prints_the_score(db, cli):
    ingest_events(db, A)
    result = cli("sessions", "score", "a", "helpfulness", "0.5", "--comment", "fine", "--json")
    assert result.exit_code == 0
    body = json.loads(result.stdout)
    assert (body["name"], body["value"], body["comment"]) == ("helpfulness", 0.5, "fine")
    assert cli("sessions", "score", "a", "helpfulness", "nan").exit_code == 1


def test_cli_delete_needs_yes_without_a_terminal(db, cli):
    ingest_events(db, A)
    refused = cli("sessions", "delete", "a")
    assert refused.exit_code == 2 and "pass --yes" in refused.stderr
    assert get_session(db, "a")["event_count"] == 4
    done = cli("sessions", "delete", "a", "--yes")
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "deleted session a and its 4 events\n")
    assert cli("sessions", "delete", "a", "--yes").exit_code == 1


def test_cli_delete_asks_on_a_terminal(db, cli, monkeypatch):
    from obsctl.cli import output

    monkeypatch.setattr(output, "stdin_is_tty", lambda: True)
    ingest_events(db, A)
    kept = cli("sessions", "delete", "a", input="n\n")
    assert kept.exit_code == 1 and "Delete session 'a' with its events, tags and scores?" in kept.stderr
    assert get_session(db, "a")["event_count"] == 4
    gone = cli("sessions", "delete", "a", "--json", input="y\n")
    # CliRunner echoes the typed answer into stdout (a terminal would show it on screen).
    assert gone.exit_code == 0 and json.loads(gone.stdout[gone.stdout.index("{"):])["events_deleted"] == 4


def test_prune_takes_a_sessions_tags_and_scores_with_it(db):
    from obsctl.services.maintenance import prune

    ingest_events(db, A + C)
    tag_session(db, "a", {"tier": "gold"})
    score_session(db, "a", {"name": "helpfulness", "value": 1})
    assert prune(db, "1d")["sessions"] == 2  # T0 is three days ago
    for table in ("session_tags", "session_scores"):
        assert db.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
