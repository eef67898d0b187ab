"""One access-log line per request on the `obsctl.access` logger (stderr under `serve`)."""

from __future__ import annotations

import logging
import sys
import time

from flask import Flask, g, request

log = logging.getLogger("obsctl.access")


def install_access_log(app: Flask) -> None:
    @app.before_request
    def _start_timer():
        g.obsctl_started = time.perf_counter()

    @app.after_request
    def _log_request(response):
        if log.isEnabledFor(logging.INFO):
            started = g.get("obsctl_started")
            ms = (time.perf_counter() - started) * 1000 if started is not None else 0.0
            # The path only: no headers (the API key travels in one), no bodies.
            log.info('%s "%s %s" %d %.1fms', request.remote_addr, request.method,
                     request.path, response.status_code, ms)
        return response


def configure_logging(level: str) -> None:
    """Log lines to stderr: `2026-11-22T02:40:00Z INFO obsctl.access 127.0.0.1 "GET /x" 200 1.2ms`."""
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s",
                                          datefmt="%Y-%m-%dT%H:%M:%S%z"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)


class _StderrHandler(logging.StreamHandler):
    """A handler writing to whatever sys.stderr is when a line is logged, not when the handler
    was made: `serve --get` configures logging in a process whose stderr may be replaced later
    (a caller capturing it), and a handler bound to a closed stream would fail on every line."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass
