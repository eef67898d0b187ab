"""Refusing requests on waitress before their bodies are read.

waitress reads a whole request body (spooling it to a temp file beyond 512 KiB) before the app
sees the request. So the body limit and the API-key check also run here, when the headers have
arrived: a `Content-Length` over `OBSCTL_MAX_BODY_BYTES` is answered 413, and a request with a
body but a missing or wrong `X-API-Key` 401, without reading the body; a chunked body is
counted as it arrives and refused once it passes the limit. The answers are the app's JSON
errors. The app keeps its own checks for everything else (and for the Flask test client).
"""

from __future__ import annotations

import logging
import time

import orjson
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.utilities import Error, RequestEntityTooLarge

from obsctl.config import Settings
from obsctl.web.errors import body_too_large_message, error_body
from obsctl.web.security import api_key_problem, needs_api_key

access_log = logging.getLogger("obsctl.access")

_REASONS = {401: "Unauthorized", 413: "Request Entity Too Large"}


class JsonError(Error):
    """A waitress error response whose body is the API's `{"error": ...}`."""

    def __init__(self, code: int, message: str, headers: list[tuple[str, str]] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = _REASONS.get(code, "Error")
        self.headers = headers or []

    def json_response(self):
        body = orjson.dumps(error_body(self.body))
        return f"{self.code} {self.reason}", [("Content-Type", "application/json"), *self.headers], body

    def to_response(self, ident=None):
        return self.json_response()


class RequestGate:
    """What may be refused from the request line and headers alone."""

    def __init__(self, settings: Settings):
        self.max_body = settings.max_body_bytes
        self.api_key = settings.api_key
        self.cors_origins = settings.cors_origins

    def refusal(self, method: str, path: str, headers: dict, content_length: int,
                chunked: bool) -> JsonError | None:
        """A 413 or 401 for this request, or None to read its body and let the app decide."""
        if content_length > self.max_body:
            return JsonError(413, body_too_large_message(self.max_body), self._cors(headers))
        has_body = chunked or content_length > 0
        if has_body and self.api_key and needs_api_key(method, path):
            message = api_key_problem(headers.get("X_API_KEY", ""), self.api_key)
            if message:
                return JsonError(401, message, self._cors(headers))
        return None

    def too_large(self, headers: dict) -> JsonError:
        return JsonError(413, body_too_large_message(self.max_body), self._cors(headers))

    def _cors(self, headers: dict) -> list[tuple[str, str]]:
        """The CORS headers flask-cors would add, so a browser can read the refusal."""
        origin = headers.get("ORIGIN")
        if not origin:
            return []
        if "*" in self.cors_origins:
            return [("Access-Control-Allow-Origin", "*")]
        if origin in self.cors_origins:
            return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
        return []


class GuardedParser(HTTPRequestParser):
    """waitress's request parser, plus the gate once the headers are in."""

    def __init__(self, adj, gate: RequestGate, peer: str):
        super().__init__(adj)
        self.gate = gate
        self.peer = peer
        self.started = time.time()

    def parse_header(self, header_plus):
        super().parse_header(header_plus)
        refusal = self.gate.refusal(self.command, self.path, self.headers, self.content_length,
                                    self.chunked)
        if refusal is None:
            return
        # Completed with an error and no body to read; waitress answers it and closes the
        # connection, so the unread body is never received.
        self.error = refusal
        self.body_rcv = None
        self.content_length = 0
        self.chunked = False
        self.expect_continue = False
        self.connection_close = True
        _log_refusal(self.peer, self.command, self.path, refusal.code)

    def received(self, data):
        consumed = super().received(data)
        if type(self.error) is RequestEntityTooLarge:
            # A chunked body went past max_request_body_size while arriving.
            self.error = self.gate.too_large(self.headers)
            _log_refusal(self.peer, self.command, self.path, 413)
        return consumed


def _log_refusal(peer: str, method: str, path: str, status: int) -> None:
    if access_log.isEnabledFor(logging.INFO):
        access_log.info('%s "%s %s" %d 0.0ms (refused before reading the body)', peer, method, path, status)


def guarded_channel_class(gate: RequestGate, base: type[HTTPChannel] = HTTPChannel) -> type[HTTPChannel]:
    """A channel class on top of `base` (which may already answer protocol errors in JSON)."""

    class GuardedChannel(base):
        requests_started = 0

        def parser_class(self, adj):
            self.requests_started += 1
            return GuardedParser(adj, gate, str(self.addr[0]) if self.addr else "-")

    return GuardedChannel


def install(server, settings: Settings) -> None:
    """Put the gate and the header timeout on a server made by `waitress.server.create_server`."""
    server.channel_class = guarded_channel_class(RequestGate(settings), server.channel_class)
    server.maintenance = _with_header_timeout(server, server.maintenance, settings.header_timeout)


def _with_header_timeout(server, idle_maintenance, header_timeout: float):
    """waitress closes connections idle for longer than channel_timeout; a client that sends a
    byte now and then (slowloris) never looks idle. This also closes connections whose request
    headers are not complete `header_timeout` seconds after the request began (or, for a new
    connection, after it was accepted)."""

    def maintenance(now: float) -> None:
        idle_maintenance(now)
        cutoff = now - header_timeout
        for channel in list(server.active_channels.values()):
            if channel.requests:
                continue  # a request is being handled; its connection is busy, not stalled
            request = channel.request
            if request is not None:
                started = None if request.headers_finished else getattr(request, "started", None)
            elif not getattr(channel, "requests_started", 1):
                started = channel.creation_time
            else:
                continue  # between requests on a keep-alive connection: the idle timeout applies
            if started is not None and started < cutoff:
                channel.will_close = True

    return maintenance
