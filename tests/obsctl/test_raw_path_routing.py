"""Any session id can be named in a URL (obsctl/web/rawpath.py): escaped slashes, dots,
percent signs and ids spelt like a literal route, through the app and through a real server."""

from __future__ import annotations

from urllib.parse import quote

import pytest
import requests

from tests.conftest import start_server

IDS = ["team/run-1", "..", ".", "batch", "candidates", "50%off", "x%2Fy", "a/b/explain", "é ü", "compare"]


def _events(ids):
    return {"events": [{"session_id": sid, "event_id": f"e-{n}", "event_type": "llm_call",
                        "timestamp": "2026-11-23T10:00:00Z", "agent_name": "a", "tokens_in": n + 1}
                       for n, sid in enumerate(ids)]}


def _escaped(sid: str) -> str:
    """As obsctl's client writes it: every reserved character escaped, dots and literals too."""
    if sid in (".", "..", "batch", "candidates", "compare"):
        return f"%{ord(sid[0]):02X}" + sid[1:]
    return quote(sid, safe="")


@pytest.fixture
def loaded(client):
    assert client.post("/events", json=_events(IDS)).status_code == 200
    return client


@pytest.mark.parametrize("sid", IDS)
def test_each_id_is_one_segment_when_escaped(loaded, sid):
    path = _escaped(sid)
    body = loaded.get(f"/sessions/{path}").json
    assert body["session_id"] == sid and len(body["events"]) == 1
    assert loaded.get(f"/sessions/{path}/explain").json["session_id"] == sid
    assert loaded.get(f"/triage/{path}").json["session_id"] == sid
    assert loaded.post(f"/postmortem/{path}").json["session_id"] == sid
    export = loaded.get(f"/sessions/{path}/export?format=csv")
    assert export.status_code == 200 and export.data.count(b"\n") == 2


def test_literal_routes_stay_the_routes_the_specification_fixes(loaded):
    assert "reports" in loaded.get("/triage/batch").json  # the batch, not the session "batch"
    assert "candidates" in loaded.get("/postmortem/candidates").json
    assert loaded.get("/triage/%62atch").json["session_id"] == "batch"


def test_unescaped_slashes_still_name_a_session(loaded):
    assert loaded.get("/sessions/team/run-1").json["session_id"] == "team/run-1"
    assert loaded.get("/sessions/team/run-1/explain").json["session_id"] == "team/run-1"


@pytest.mark.parametrize(("path", "message"), [
    ("/sessions/no%2Fsuch", "session 'no/such' not found"),
    ("/sessions/%FF", None),  # not UTF-8: no session is named so
    ("/triage/x%25", "session 'x%' not found"),
])
def test_unknown_ids_are_404_with_the_id_decoded(loaded, path, message):
    response = loaded.get(path)
    assert response.status_code == 404
    if message:
        assert response.json["error"] == message


def test_a_real_server_routes_escaped_ids(tmp_path):
    server = start_server(str(tmp_path / "obsctl.db"), tmp_path, {"OBSCTL_RATE_LIMITS": "off"})
    try:
        assert requests.post(f"{server.url}/events", json=_events(IDS), timeout=10).status_code == 200
        for sid in IDS:
            # Sent as written: requests would resolve a bare `..` segment, never an escaped one.
            answer = requests.get(f"{server.url}/sessions/{_escaped(sid)}", timeout=10)
            assert answer.status_code == 200 and answer.json()["session_id"] == sid, sid
    finally:
        server.stop()
