"""Remote sessions: the use cases of `obsctl.services.sessions` (list, show, explain, export,
compare, delete, tag, score) answered by a server's HTTP API. Each function has its service's name and
parameters, with the client in place of the store, and returns what the service returns."""

from __future__ import annotations

from collections.abc import Iterator

import requests

from obsctl.client.http import Client
from obsctl.client.paths import api_path
from obsctl.errors import ServiceUnavailable
from obsctl.services.sessions.export import ExportStream, check_format
from obsctl.services.sessions.housekeeping import check_tag_filters

# Bytes read at a time from a streamed export.
_CHUNK = 64 * 1024


def _absent(session_id: str) -> str:
    return f"session {session_id!r} not found"


def list_sessions(client: Client, *, status: str | None = None, limit: int | None = None,
                  offset: int | None = None, tag: list[str] | str | None = None) -> dict:
    # Checked here as the service checks them: `key=value` as typed goes out as `key:value`.
    tags = [f"{k}:{v}" for k, v in check_tag_filters(tag)]
    return client.get_json("/sessions", {"status": status, "limit": limit, "offset": offset,
                                         "tag": tags or None})


def get_session(client: Client, session_id: str, *, tree: bool = False) -> dict:
    return client.get_json(api_path("/sessions/{}", session_id, absent=_absent(session_id)),
                           {"tree": "true"} if tree else None)


def delete_session(client: Client, session_id: str) -> dict:
    return client.delete(api_path("/sessions/{}", session_id, absent=_absent(session_id)))


def tag_session(client: Client, session_id: str, changes: dict) -> dict:
    # A merge patch: sending it twice leaves the same tags, so a retry is safe.
    path = api_path("/sessions/{}/tags", session_id, absent=_absent(session_id))
    return client.decode(client.request("PATCH", path, json=changes, idempotent=True))


def score_session(client: Client, session_id: str, body: dict) -> dict:
    return client.post_json(api_path("/sessions/{}/scores", session_id, absent=_absent(session_id)), body)


def explain_session(client: Client, session_id: str) -> dict:
    return client.get_json(api_path("/sessions/{}/explain", session_id, absent=_absent(session_id)))


def compare_sessions(client: Client, session_a: str, session_b: str) -> dict:
    # Comparing changes nothing on the server: safe to send again after a timeout.
    return client.post_json("/sessions/compare", {"session_a": session_a, "session_b": session_b},
                            idempotent=True)


def export_session(client: Client, session_id: str, fmt: str | None = "json") -> ExportStream:
    """The server's export, streamed: its body is read as it is written out."""
    fmt = check_format(fmt)
    path = api_path("/sessions/{}/export", session_id, absent=_absent(session_id))
    response = client.request("GET", path, params={"format": fmt},
                              stream=True)
    filename = f"session-{session_id}.{fmt}"
    return ExportStream(fmt, response.headers.get("Content-Type", ""), filename,
                        _chunks(client, response), -1)


def _chunks(client: Client, response: requests.Response) -> Iterator[bytes]:
    with response:
        try:
            yield from response.iter_content(_CHUNK)
        except requests.RequestException:
            # Nothing written so far is complete: `export -o` keeps no partial file.
            raise ServiceUnavailable(f"the connection to the obsctl server at {client.server} broke "
                                     f"during the export; nothing complete was received") from None
