"""Remote sessions: the use cases of `obsctl.services.sessions` (list, show, explain, export,
compare, delete, tag, score) answered by a server's HTTP API. Each function has its service's name and
parameters, with the client in place of the store, and returns what the service returns."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import orjson
import requests

from obsctl.client.http import Client
from obsctl.client.paths import api_path
from obsctl.errors import ServiceUnavailable
from obsctl.models.sessions import EventSelection
from obsctl.services.sessions.bulk_export import FORMATS as BULK_FORMATS
from obsctl.services.sessions.bulk_export import check_bulk_format
from obsctl.services.sessions.export import ExportStream, check_format
from obsctl.services.sessions.filters import COST_PARAMS, RANGE_PARAMS, session_filter
from obsctl.services.sessions.follow import POLL_SECONDS, FeedEvent

# Bytes read at a time from a streamed export.
_CHUNK = 64 * 1024
# A follow's stream is quiet at most a heartbeat (15 s) at a time: three missed is a broken one.
FOLLOW_READ_TIMEOUT = 45.0
FOLLOW_RECONNECTS = 5


def _absent(session_id: str) -> str:
    return f"session {session_id!r} not found"


def list_sessions(client: Client, *, limit: int | None = None, offset: int | None = None,
                  cursor: str | None = None, **filters: Any) -> dict:
    # Checked here as the service checks them (the same SessionFilter), then sent as the
    # route reads them: `key=value` as typed goes out as `key:value`, lists as repeated values.
    selection = session_filter(**filters)
    params: dict[str, Any] = {"limit": limit, "offset": offset, "cursor": cursor,
                              "sort": filters.get("sort"), "status": selection.status,
                              "since": filters.get("since"), "from": filters.get("from_"),
                              "to": filters.get("to")}
    if selection.has_errors is not None:
        params["has_errors"] = "true" if selection.has_errors else "false"
    for name in (*RANGE_PARAMS, *COST_PARAMS):
        params[name] = getattr(selection, name)
    # One entry per filters.LIST_PARAMS (a test holds them equal).
    lists = {"agent": selection.agents, "model": selection.models, "tool": selection.tools,
             "error_type": selection.error_types,
             "tag": [f"{k}:{v}" for k, v in selection.tags],
             "metadata": [f"{k}:{v}" for k, v in selection.metadata]}
    params.update({name: list(values) or None for name, values in lists.items()})
    return client.get_json("/sessions", params)


def delete_session(client: Client, session_id: str) -> dict:
    return client.delete(api_path("/sessions/{}", session_id, absent=_absent(session_id)))


def tag_session(client: Client, session_id: str, changes: dict) -> dict:
    # A merge patch: sending it twice leaves the same tags, so a retry is safe.
    path = api_path("/sessions/{}/tags", session_id, absent=_absent(session_id))
    return client.decode(client.request("PATCH", path, json=changes, idempotent=True))


def score_session(client: Client, session_id: str, body: dict) -> dict:
    return client.post_json(api_path("/sessions/{}/scores", session_id, absent=_absent(session_id)), body)


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


def _selection_params(selection: EventSelection) -> dict:
    return {"since": selection.since, "until": selection.until, "agent": list(selection.agents),
            "status": list(selection.statuses), "session": list(selection.session_ids),
            "event_type": list(selection.event_types)}


def export_events(client: Client, selection: EventSelection, fmt: str | None = "jsonl") -> ExportStream:
    """The server's bulk export (GET /export), streamed: its body is read as it is written out."""
    fmt = fmt or "jsonl"
    if fmt not in BULK_FORMATS:  # the local check, without needing pyarrow here
        check_bulk_format(fmt)
    response = client.request("GET", "/export", params={"format": fmt, **_selection_params(selection)},
                              stream=True)
    return ExportStream(fmt, response.headers.get("Content-Type", ""), f"obsctl-export.{fmt}",
                        _chunks(client, response), -1)


def follow_events(client: Client, selection: EventSelection = EventSelection(), *,
                  lines: int | None = None, after: str | None = None, follow: bool = True,
                  stop: threading.Event | None = None,
                  poll_seconds: float = POLL_SECONDS) -> Iterator[FeedEvent]:
    """The server's event stream (GET /events/stream, Server-Sent Events) as the local
    follow's events. A dropped connection is reopened with Last-Event-ID, so nothing is lost
    or repeated; after FOLLOW_RECONNECTS failed reopenings in a row the follow fails."""
    stop = stop or threading.Event()
    params = {**_selection_params(selection), "lines": lines, "follow": None if follow else "false"}
    failures = 0
    while not stop.is_set():
        headers = {"Accept": "text/event-stream"}
        if after is not None:
            headers["Last-Event-ID"] = after
        try:
            response = client.request("GET", "/events/stream", params=params, headers=headers, stream=True,
                                      timeout=FOLLOW_READ_TIMEOUT)
        except ServiceUnavailable:
            failures += 1
            if failures > FOLLOW_RECONNECTS:
                raise
            stop.wait(min(2 ** failures, 10))
            continue
        try:
            with response:
                for position, data in _messages(response):
                    failures = 0
                    after = position
                    if data is not None:
                        event = orjson.loads(data)
                        yield FeedEvent(event["position"], event["agent_name"], event["event"])
                    if stop.is_set():
                        return
            if not follow:
                return
        except requests.RequestException:
            if not follow:
                raise ServiceUnavailable(f"the connection to the obsctl server at {client.server} broke "
                                         f"while reading events") from None
        failures += 1
        if failures > FOLLOW_RECONNECTS:
            raise ServiceUnavailable(f"the event stream from the obsctl server at {client.server} "
                                     f"broke {failures} times in a row; giving up")
        stop.wait(min(2 ** (failures - 1), 10))


def _messages(response: requests.Response) -> Iterator[tuple[str | None, bytes | None]]:
    """(last event id, data or None) per Server-Sent Events message; comments are skipped."""
    position: str | None = None
    data: list[bytes] = []
    for line in response.iter_lines(chunk_size=None):  # type: ignore[call-overload]  # None: as it arrives
        if not line:
            if data or position is not None:
                yield position, b"\n".join(data) if data else None
            data = []
            continue
        if line.startswith(b":"):
            continue
        name, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if name == b"data":
            data.append(value)
        elif name == b"id":
            position = value.decode()
