"""Replaying the OTLP requests of real clients recorded under tests/data/otlp/ against the app."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parent / "data" / "otlp"


def replay(client, recording: str, headers: dict | None = None) -> list[tuple[str, int, bytes]]:
    """Send every recorded request, in order, with its own content headers plus `headers`;
    (path, status, answer body) of each."""
    answers = []
    folder = RECORDINGS / recording
    for line in (folder / "requests.jsonl").read_text().splitlines():
        sent = json.loads(line)
        content = {k: v for k, v in sent["headers"].items() if k in ("content-type", "content-encoding")}
        response = client.post(sent["path"], data=(folder / sent["body_file"]).read_bytes(),
                               headers={**content, **(headers or {})})
        answers.append((sent["path"], response.status_code, response.data))
    return answers


def session_events(client, session_id: str, headers: dict | None = None) -> tuple[dict, dict[str, list[dict]]]:
    """The session and its events grouped by event type."""
    response = client.get(f"/sessions/{session_id}", headers=headers or {})
    assert response.status_code == 200, response.data
    session = response.get_json()
    by_type: dict[str, list[dict]] = {}
    for event in session["events"]:
        by_type.setdefault(event["event_type"], []).append(event)
    return session, by_type


def trace_bodies(recording: str) -> list[bytes]:
    """The recorded `/v1/traces` request bodies (Langfuse's path included), decompressed, in order."""
    folder = RECORDINGS / recording
    bodies = []
    for line in (folder / "requests.jsonl").read_text().splitlines():
        sent = json.loads(line)
        if sent["path"].endswith("/v1/traces"):
            body = (folder / sent["body_file"]).read_bytes()
            bodies.append(gzip.decompress(body) if sent["headers"].get("content-encoding") == "gzip" else body)
    return bodies
