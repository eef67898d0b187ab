"""Refusing requests on waitress before their bodies are read.

waitress reads a whole request body (spooling it to a temp file beyond 512 KiB) before the app
sees the request. So these checks run as soon as the headers have arrived, and a refused
request's body is never received (the connection closes after the answer):

- a `Content-Length` over OBSCTL_MAX_BODY_BYTES: 413 (a chunked body is counted as it arrives
  and refused once it passes the limit);
- a body with a missing or wrong `X-API-Key` on a route that needs the key: 401, or 429 once the
  client's address is over OBSCTL_AUTH_FAILURE_LIMIT (auth_limit.py; the failure is counted on a
  request thread, not in the server's event loop); with the right key, 429 too while the
  address is over the limit;
- a body sent where no route takes one: no route (404), a method the path does not have (405),
  GET, HEAD or OPTIONS (413);
- with SERVICE_API_KEY set, a dashboard form (a POST under /ui/) whose cookie this dashboard did
  not sign (400), that holds no login but for the login form (401), or over FORM_MAX_BYTES (413).

The answers are the app's JSON errors. The app keeps its own checks for everything else (and for
the Flask test client). The client's address (client_address.py) is worked out here too and
given to the app as REMOTE_ADDR. The connection-level limits are in connection_guard.py.
"""

from __future__ import annotations

import logging
import time

import orjson
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.task import WSGITask
from waitress.utilities import Error, RequestEntityTooLarge
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound

from obsctl.web import connection_guard
from obsctl.web.allow import path_methods
from obsctl.web.auth_limit import TOO_MANY, key_problem, presented_key
from obsctl.web.client_address import client_address
from obsctl.web.errors import body_too_large_message, error_body
from obsctl.web.rawpath import routing_path
from obsctl.web.security import auth_failures, is_dashboard_path, needs_api_key

access_log = logging.getLogger("obsctl.access")

_REASONS = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            413: "Request Entity Too Large", 429: "Too Many Requests"}
_NO_BODY_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOGIN_PATH = "/ui/login"


class JsonError(Error):
    """A waitress error response whose body is the API's `{"error": ...}`, logged when sent."""

    where: tuple[str, str, str] = ("-", "-", "-")  # client, method, path: set by the parser

    def __init__(self, code: int, message: str, headers: list[tuple[str, str]] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = _REASONS.get(code, "Error")
        self.headers = headers or []

    def answer(self) -> tuple[int, str, list[tuple[str, str]]]:
        """(status, message, extra headers); runs on a request thread, when the answer is due."""
        return self.code, self.body, self.headers

    def json_response(self):
        code, message, headers = self.answer()
        _log_refusal(*self.where, code)
        body = orjson.dumps(error_body(message))
        return f"{code} {_REASONS.get(code, 'Error')}", [("Content-Type", "application/json"), *headers], body

    def to_response(self, ident=None):
        return self.json_response()


class KeyRefusal(JsonError):
    """A body with a wrong or missing key: 401 or 429, decided (and counted) when answered."""

    def __init__(self, gate: RequestGate, client: str, provided: str, headers: list[tuple[str, str]]):
        super().__init__(401, "", headers)
        self.gate, self.client, self.provided = gate, client, provided

    def answer(self):
        refusal = self.gate.failures.check(self.client, self.provided, self.gate.api_key)
        if refusal is None:  # cannot happen: the key was checked wrong; refuse all the same
            return 401, "invalid API key", self.headers
        headers = [("Retry-After", str(refusal.retry_after))] if refusal.retry_after else []
        return refusal.status, refusal.message, self.headers + headers


class RequestGate:
    """What may be refused from the request line and headers alone."""

    def __init__(self, app):
        settings = app.extensions["obsctl"].settings
        self.app = app
        self.max_body = settings.max_body_bytes
        self.api_key = settings.api_key
        self.cors_origins = settings.cors_origins
        self.trusted_proxies = settings.trusted_proxies
        self.failures = auth_failures(app)
        self.adapter = app.url_map.bind("localhost")
        if self.api_key:
            from obsctl.web.ui import access

            access.app_signing_key(app)  # read (or made) now, not in the event loop later
            self._cookie_session = lambda cookie: access.cookie_session(app, cookie)
            self.form_max = access.FORM_MAX_BYTES

    def client_of(self, peer: str, headers: dict) -> str:
        return client_address(peer, headers.get("X_FORWARDED_FOR"), self.trusted_proxies)

    def body_limit(self, path: str) -> int:
        """The largest body a request to `path` may have."""
        if self.api_key and is_dashboard_path(path):
            return self.form_max
        return self.max_body

    def refusal(self, method: str, path: str, request_uri: str, headers: dict, content_length: int,
                chunked: bool, client: str) -> JsonError | None:
        """The answer to give instead of reading this request's body, or None to read it and
        let the app decide."""
        if not chunked and content_length <= 0:
            return None  # nothing to read: the app decides
        limit = self.body_limit(path)
        if content_length > limit:
            return self.too_large(headers, limit)
        if self.api_key and needs_api_key(method, path):
            provided = presented_key(headers.get("X_API_KEY"), headers.get("AUTHORIZATION"))
            if key_problem(provided, self.api_key) is not None:
                return KeyRefusal(self, client, provided, self._cors(headers))
            wait = self.failures.wait(client)
            if wait is not None:
                return JsonError(429, TOO_MANY.format(wait=wait), [*self._cors(headers), ("Retry-After", str(wait))])
        refused = self._route_refusal(method, routing_path(path, request_uri), headers)
        if refused is None and self.api_key and is_dashboard_path(path):
            refused = self._form_refusal(path, headers)
        return refused

    def _route_refusal(self, method: str, path: str, headers: dict) -> JsonError | None:
        """Refuse a body that no route would read."""
        try:
            self.adapter.match(path, method=method)
        except NotFound:
            return JsonError(404, "not found: no such route", self._cors(headers))
        except MethodNotAllowed:
            allow = [("Allow", ", ".join(path_methods(self.app, self.adapter, path) or ()))]
            return JsonError(405, "method not allowed on this route", allow + self._cors(headers))
        except HTTPException:
            return None  # a redirect: the app answers it without reading the body
        if method in _NO_BODY_METHODS:
            return JsonError(413, "this route takes no request body", self._cors(headers))
        return None

    def _form_refusal(self, path: str, headers: dict) -> JsonError | None:
        """A dashboard form is read only from a browser this dashboard gave a cookie."""
        session = self._cookie_session(headers.get("COOKIE"))
        if session is None or not isinstance(session.get("csrf"), str):
            return JsonError(400, "the form has expired or did not come from this dashboard: "
                                  "reload the page and try again")
        if path != LOGIN_PATH and not session.get("login"):
            return JsonError(401, "log in first")
        return None

    def too_large(self, headers: dict, limit: int) -> JsonError:
        return JsonError(413, body_too_large_message(limit), self._cors(headers))

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
        self.peer = self.client = peer
        self.started = time.time()
        self.body_started: float | None = None  # when the headers ended
        self.body_limit = gate.max_body

    def parse_header(self, header_plus):
        super().parse_header(header_plus)
        self.body_started = time.time()
        self.client = self.gate.client_of(self.peer, self.headers)
        self.body_limit = self.gate.body_limit(self.path)
        refusal = self.gate.refusal(self.command, self.path, self.request_uri, self.headers,
                                    self.content_length, self.chunked, self.client)
        if refusal is not None:
            self._refuse(refusal)

    def _refuse(self, refusal: JsonError) -> None:
        # Completed with an error and no body to read; waitress answers it and closes the
        # connection, so the unread body is never received.
        refusal.where = (self.client, self.command, self.path)
        self.error = refusal
        self.body_rcv = None
        self.content_length = 0
        self.chunked = False
        self.expect_continue = False
        self.connection_close = True
        self.completed = True

    def received(self, data):
        consumed = super().received(data)
        if type(self.error) is RequestEntityTooLarge or (
                self.error is None and not self.completed and self.body_bytes_received > self.body_limit):
            # A chunked body went past the limit while arriving.
            self.error = self.gate.too_large(self.headers, self.body_limit)
            self.error.where = (self.client, self.command, self.path)
            self.completed = True
        return consumed


class ClientTask(WSGITask):
    """The app's REMOTE_ADDR is the client's address (what trusted proxies say it is)."""

    def get_environment(self):
        environ = super().get_environment()
        environ["REMOTE_ADDR"] = getattr(self.request, "client", None) or environ["REMOTE_ADDR"]
        return environ


def _log_refusal(client: str, method: str, path: str, status: int) -> None:
    if access_log.isEnabledFor(logging.INFO):
        access_log.info('%s "%s %s" %d 0.0ms (refused before reading the body)', client, method, path, status)


def guarded_channel_class(gate: RequestGate, base: type[HTTPChannel] = HTTPChannel) -> type[HTTPChannel]:
    """A channel class on top of `base` (which may already answer protocol errors in JSON)."""

    class GuardedChannel(connection_guard.CountedChannel, base):
        requests_started = 0
        task_class = ClientTask

        def parser_class(self, adj):
            self.requests_started += 1
            return GuardedParser(adj, gate, str(self.addr[0]) if self.addr else "-")

    return GuardedChannel


def install(server, app) -> None:
    """Put the gate and the connection limits on a server made by `waitress.server.create_server`."""
    settings = app.extensions["obsctl"].settings
    server.channel_class = guarded_channel_class(RequestGate(app), server.channel_class)
    connection_guard.install(server, settings)
