"""`GET /events/stream`: new events as they are stored, as Server-Sent Events
(services/sessions/follow.py). Shares the `/sessions` rate-limit group.

Each message is one event: `id:` its position, `data:` its JSON (models FollowedEvent). A
client that reconnects with `Last-Event-ID` gets what was stored after that event (browsers'
EventSource does it by itself). Between reads the stream holds no database connection,
transaction or writer: each read borrows and returns them. A comment line goes out when
nothing has for `heartbeat` seconds, so proxies keep the connection and a gone client is
noticed.

Each open stream holds one of the server's request threads, so at most OBSCTL_MAX_STREAMS
(default: half of `serve --threads`) are open at once; one more is answered 503 with
Retry-After. Streams end when the server stops.
"""

from __future__ import annotations

import threading
import time

import orjson
from flask import Blueprint, Response, current_app, request

from obsctl.errors import ServiceUnavailable
from obsctl.models.sessions import FollowedEvent
from obsctl.params import IntParam
from obsctl.services.sessions.follow import LINES, PAGE, POLL_SECONDS, events_after, latest_events
from obsctl.web.http import bool_arg, get_store, int_arg
from obsctl.web.openapi_util import error_responses, int_query_param, operation, query_param
from obsctl.web.routes.session_views import selection_args, selection_params

blueprint = Blueprint("follow", __name__)
RATE_GROUP = "sessions"

HEARTBEAT = IntParam("heartbeat", 1, 300, default=15)
# Streams open at once without `serve` to size them (the Flask test client, other servers).
DEFAULT_MAX_STREAMS = 4
# How long an EventSource waits before reconnecting, in milliseconds.
RETRY_MS = 2000


class StreamGate:
    """The open event streams: at most `limit` at once, all told to end when the server stops."""

    def __init__(self, limit: int):
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)
        self.closing = threading.Event()

    def enter(self) -> None:
        if self.closing.is_set():
            raise ServiceUnavailable("this server is stopping; reconnect to another one or shortly", retry_after=5)
        if not self._slots.acquire(blocking=False):
            raise ServiceUnavailable(
                f"this server already has {self.limit} event streams open (OBSCTL_MAX_STREAMS); "
                f"retry later or follow with fewer clients", retry_after=5)

    def leave(self) -> None:
        self._slots.release()

    def close(self) -> None:
        self.closing.set()


@blueprint.record_once
def _install_gate(state) -> None:
    settings = state.app.extensions["obsctl"].settings
    state.app.extensions["obsctl_streams"] = StreamGate(settings.max_streams or DEFAULT_MAX_STREAMS)


def _message(event) -> bytes:
    return b"id: " + event.position.encode() + b"\ndata: " + orjson.dumps(event.as_dict()) + b"\n\n"


@blueprint.get("/events/stream")
def stream_events():
    return event_stream(get_store(), selection_args(), lines=LINES.check(int_arg("lines")),
                        heartbeat=HEARTBEAT.check(int_arg("heartbeat")), follow=bool_arg("follow", True))


def event_stream(store, selection, *, lines: int, heartbeat: int, follow: bool = True,
                 after: str | None = None) -> Response:
    """The Server-Sent Events response of a follow (this route's, and the dashboard's live
    updates): resumes after the request's Last-Event-ID (else `after`), else starts with the last `lines`
    selected events; one of the server's stream slots while it lasts."""
    resume = request.headers.get("Last-Event-ID") or after
    gate: StreamGate = current_app.extensions["obsctl_streams"]
    gate.enter()
    try:
        # The first read before the answer: a position this store never gave is a 400.
        first = events_after(store, resume, selection) if resume else latest_events(store, selection, lines)
    except BaseException:
        gate.leave()
        raise

    def body():
        page = first
        yield f"retry: {RETRY_MS}\n\n".encode()
        for event in page.events:
            yield _message(event)
        position = page.position
        if not page.events and position is not None:
            # Sets the client's last event id: a reconnect resumes from here, not from the end.
            yield b"id: " + position.encode() + b"\n\n"
        if not follow:
            return
        quiet_since = time.monotonic()
        while not gate.closing.wait(0 if len(page.events) >= PAGE.default else POLL_SECONDS):
            page = events_after(store, position, selection)
            for event in page.events:
                yield _message(event)
            position = page.position
            if page.events:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= heartbeat:
                yield b": heartbeat\n\n"
                quiet_since = time.monotonic()

    response = Response(body(), content_type="text/event-stream; charset=utf-8",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    response.call_on_close(gate.leave)
    return response


OPENAPI_MODELS = (FollowedEvent,)

OPENAPI_PATHS = {
    "/events/stream": {
        "get": operation(
            "sessions",
            "Follow events as they are stored: Server-Sent Events, one FollowedEvent per message, "
            "`id:` its position; resume with Last-Event-ID",
            params=[
                *selection_params(),
                int_query_param(LINES, "Events stored last to send first (ignored with Last-Event-ID)"),
                int_query_param(HEARTBEAT, "Seconds of quiet before a `: heartbeat` comment"),
                query_param("follow", {"type": "boolean", "default": True},
                            "false: send the first events (the last `lines`, or those after "
                            "Last-Event-ID) and end the stream"),
                {"name": "Last-Event-ID", "in": "header", "required": False, "schema": {"type": "string"},
                 "description": "The id of the last message received: the stream resumes after it"},
            ],
            ok={
                "description": "text/event-stream: `retry:`, then `id: POSITION` / `data: FollowedEvent` "
                               "messages as events are stored, and `: heartbeat` comments",
                "content": {"text/event-stream": {"schema": {
                    "type": "string", "description": "messages whose data is a FollowedEvent"}}},
            },
            errors=error_responses(400, 503),
        ),
    },
}
