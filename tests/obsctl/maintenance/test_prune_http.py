"""`POST /prune` works a few seconds per request and says whether it finished; the client
goes on with the cutoff of the first answer until it has."""

from __future__ import annotations

from datetime import timedelta

import orjson
import pytest

from obsctl.client.http import Client
from obsctl.client.maintenance import prune as remote_prune
from obsctl.services import maintenance
from obsctl.services.ingest import ingest_events
from obsctl.timeutil import iso_minus
from obsctl.web.routes import maintenance as route
from tests.conftest import event
from tests.obsctl.test_client_http import ScriptedServer


def _seed(db, old_sessions: int):
    older = iso_minus(timedelta(days=90))
    ingest_events(db, [event(f"old-{n}", timestamp=older) for n in range(old_sessions)]
                  + [event("new", timestamp=iso_minus(timedelta(hours=1)))])


def test_a_prune_request_stops_when_its_time_is_up_and_goes_on_with_its_cutoff(db, client, monkeypatch):
    _seed(db, 5)
    monkeypatch.setattr(maintenance, "PRUNE_BATCH_SESSIONS", 2)
    monkeypatch.setattr(route, "PRUNE_SECONDS", 0.0)  # every request stops after one batch
    first = client.post("/prune", json={"older_than": "30d"}).json
    assert (first["sessions"], first["events"], first["complete"]) == (2, 2, False)
    answers = [first]
    while not answers[-1]["complete"]:
        answers.append(client.post("/prune", json={"older_than": "30d", "cutoff": first["cutoff"]}).json)
    # Each request deletes one batch; the one that finds nothing left says it is complete.
    assert [a["sessions"] for a in answers] == [2, 2, 1, 0]
    assert {a["cutoff"] for a in answers} == {first["cutoff"]}
    assert [r[0] for r in db.conn.execute("SELECT session_id FROM sessions")] == ["new"]


def test_without_a_deadline_one_request_finishes(db, client):
    _seed(db, 3)
    answer = client.post("/prune", json={"older_than": "30d", "dry_run": False}).json
    assert (answer["sessions"], answer["complete"]) == (3, True)
    dry = client.post("/prune", json={"older_than": "30d", "dry_run": True}).json
    assert (dry["sessions"], dry["dry_run"], dry["complete"]) == (0, True, True)


@pytest.mark.parametrize(("body", "message"), [
    ({}, "older_than must be an age"),
    ([], "must be a JSON object"),
    ({"older_than": 30}, "older_than must be an age like 30d"),
    ({"older_than": "30x"}, "age must look like 30d"),
    ({"older_than": "30d", "dry_run": "yes"}, "dry_run must be true or false"),
    ({"older_than": "30d", "force": True}, "unknown field(s) 'force'"),
    ({"older_than": "30d", "cutoff": "yesterday"}, "cutoff must be an ISO 8601 timestamp"),
    ({"older_than": "30d", "cutoff": "2999-01-01T00:00:00Z"}, "is less than 30d ago"),
])
def test_bad_prune_bodies_are_400_and_delete_nothing(db, client, body, message):
    _seed(db, 1)
    answer = client.post("/prune", json=body)
    assert answer.status_code == 400 and message in answer.json["error"]
    assert db.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2


def test_db_info_over_http_skips_the_check_when_asked(client):
    assert client.get("/db/info").json["integrity"]["quick_check"] == "ok"
    assert client.get("/db/info?check=false").json["integrity"]["quick_check"] == "skipped"
    assert client.get("/db/info?check=maybe").status_code == 400


def test_the_client_sums_the_answers_until_the_prune_is_complete():
    cutoff = "2026-10-24T10:00:00.000Z"
    part = {"older_than": "30d", "cutoff": cutoff, "dry_run": False}
    server = ScriptedServer(((200, {}, {**part, "sessions": 500, "events": 9000, "complete": False}),
                             (200, {}, {**part, "sessions": 120, "events": 800, "complete": True})))
    progress = []
    try:
        with Client(server.url) as remote:
            result = remote_prune(remote, "30d", on_progress=lambda s, e: progress.append((s, e)))
    finally:
        server.stop()
    assert result == {**part, "sessions": 620, "events": 9800}
    assert progress == [(500, 9000)]
    sent = [orjson.loads(r["body"]) for r in server.seen]
    assert sent == [{"older_than": "30d", "dry_run": False},
                    {"older_than": "30d", "dry_run": False, "cutoff": cutoff}]
