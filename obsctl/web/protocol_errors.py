"""JSON bodies for the errors waitress answers itself, before the app sees the request.

waitress parses the request line, the headers and the body framing. A request it cannot parse
(a bad Content-Length, a chunk size that is not hexadecimal, a garbage request line, headers over
`max_request_header_size`, a path that is not a valid URI, an unsupported Transfer-Encoding) is
answered by waitress' `ErrorTask`, whose body is text/plain. A waitress channel names the task
that builds those responses in its `error_task_class` attribute, and a waitress server names its
channel class in `channel_class`; `install_json_errors` points both at subclasses that write the
same status with a JSON body in the app's own error shape. Nothing else about waitress changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask

# (status code, reason phrase, waitress' detail) -> the JSON body of the response
ErrorBody = Callable[[int, str, str], dict]


class JsonErrorTask(ErrorTask):
    """waitress' error response with a JSON body; `error_body` is set by `install_json_errors`."""

    error_body: ErrorBody

    def execute(self) -> None:
        error = self.request.error
        own = getattr(error, "json_response", None)
        if own is not None:
            # An error that already carries the app's JSON answer (the request gate's 401/413).
            self.status, headers, body = own()
            self.response_headers.extend(headers)
        else:
            body = json.dumps(type(self).error_body(error.code, error.reason, error.body)).encode()
            self.status = f"{error.code} {error.reason}"
            self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()  # the rest of the stream cannot be trusted, as in waitress
        self.content_length = len(body)
        self.write(body)


def json_error_channel(error_body: ErrorBody) -> type[HTTPChannel]:
    """A waitress channel class whose protocol errors have JSON bodies built by `error_body`."""
    task = type("JsonErrorTask", (JsonErrorTask,), {"error_body": staticmethod(error_body)})
    return type("JsonErrorChannel", (HTTPChannel,), {"error_task_class": task})


def install_json_errors(server, error_body: ErrorBody) -> None:
    """Make the server from `waitress.create_server` answer protocol errors with JSON bodies.

    Call it before the server runs. A server listening on several sockets is a
    MultiSocketServer whose per-socket servers live in its socket map.
    """
    channel = json_error_channel(error_body)
    listeners = [server] if isinstance(server, BaseWSGIServer) else [
        dispatcher for dispatcher in server.map.values() if isinstance(dispatcher, BaseWSGIServer)]
    for listener in listeners:
        listener.channel_class = channel


def obsctl_error_body(code: int, reason: str, detail: str) -> dict:
    """`{"error": "bad request: Content-Length is invalid"}`; a 500 shows no detail."""
    if code >= 500 and code != 501:
        return {"error": "internal server error"}
    return {"error": f"{reason.lower()}: {detail}" if detail else reason.lower()}
