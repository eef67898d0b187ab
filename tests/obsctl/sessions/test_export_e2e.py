"""Session views through a real `obsctl serve` (waitress): chunked export, then analytics."""

import csv
import io

import pytest
import requests

from obsctl.services.ingest import ingest_events
from tests.conftest import event

pytestmark = pytest.mark.e2e


def test_large_export_is_chunked_and_analytics_sees_new_events(db, live_server):
    ingest_events(db, [event("big", event_id=f"b{i:04d}", model="m", tokens_in=1,
                             tool_call={"name": "t", "input": {"n": i}},
                             timestamp=f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}Z")
                       for i in range(600)])
    server = live_server()
    r = requests.get(f"{server.url}/sessions/big/export", params={"format": "csv"}, timeout=30)
    assert r.status_code == 200
    assert r.headers["Transfer-Encoding"] == "chunked"
    assert r.headers["Content-Disposition"] == 'attachment; filename="session-big.csv"'
    rows = list(csv.reader(io.StringIO(r.text, newline="")))
    assert len(rows) == 601
    assert rows[600][:2] == ["b0599", "llm_call"] and rows[600][9:11] == ["t", '{"n":599}']

    assert requests.get(f"{server.url}/analytics", timeout=30).json()["model_usage"][0]["call_count"] == 600
    posted = requests.post(f"{server.url}/events", timeout=30, json={"events": [
        event("big", event_id="late", model="m", timestamp="2026-03-01T11:00:00Z")]})
    assert posted.status_code == 200
    assert requests.get(f"{server.url}/analytics", timeout=30).json()["model_usage"][0]["call_count"] == 601
