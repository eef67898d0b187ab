"""Running a WSGI app on waitress until SIGTERM or SIGINT, then draining: the one server runner
of `obsctl serve` and `printq serve`.

`listen` creates the server (a port in use or a host that does not resolve raises here, for the
caller to word); `run_until_signalled` serves until a signal, then stops accepting connections,
lets the requests already received finish and their responses go out (up to `drain_seconds`),
and closes everything. What differs between the tools is passed in: the ident, the JSON shape
of waitress' own protocol errors, extra waitress options, a hook to adjust the server (obsctl's
request gate), the ready message and the clean-up.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable

from obsctl import gcpolicy
from obsctl.web.protocol_errors import ErrorBody, install_json_errors


def listen(app, *, host: str, port: int, threads: int, ident: str, error_body: ErrorBody,
           **options):
    """A waitress server for `app` bound to `host:port`, answering protocol errors with
    `error_body` JSON. `options` are further `waitress.server.create_server` adjustments.

    Raises OSError (port in use, no permission) or ValueError (a host that does not resolve).
    """
    from waitress.server import create_server

    server = create_server(app, host=host, port=port, threads=threads, ident=ident,
                           clear_untrusted_proxy_headers=True, **options)
    install_json_errors(server, error_body)  # waitress' own 400/431/501 answers in JSON too
    return server


def run_until_signalled(server, *, drain_seconds: float = 20.0,
                        on_ready: Callable[[object], None] | None = None,
                        on_stop: Callable[[], None] | None = None,
                        on_stopping: Callable[[], None] | None = None) -> None:
    """Serve until SIGTERM or SIGINT, drain the requests in flight, then close the server.

    `on_ready(server)` runs once the signal handlers are in place (the start-up message);
    `on_stopping()` when the signal arrives, before the drain (long responses end themselves);
    `on_stop()` runs last, after the connections are closed, however the loop ended.
    """
    from waitress import wasyncore

    gcpolicy.for_bulk_work()
    stopping = threading.Event()

    def _stop(signum, frame):
        stopping.set()
        server.pull_trigger()  # wake the loop now rather than at its next timeout

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    socket_map = server._map
    try:
        if on_ready is not None:
            on_ready(server)
        while not stopping.is_set():
            wasyncore.loop(timeout=0.5, map=socket_map, use_poll=True, count=1)
        if on_stopping is not None:
            on_stopping()
        # Stop accepting, keep the trigger and open channels so responses still go out.
        server.accepting = False
        wasyncore.dispatcher.close(server)
        deadline = time.monotonic() + drain_seconds
        while time.monotonic() < deadline and busy(server):
            wasyncore.loop(timeout=0.05, map=socket_map, use_poll=True, count=1)
    finally:
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=5)
        for channel in list(server.active_channels.values()):
            with contextlib.suppress(OSError):
                channel.close()
        server.trigger.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if on_stop is not None:
            on_stop()


def busy(server) -> bool:
    """True while a request is being handled or a response is still being written."""
    if server.task_dispatcher.queue:
        return True
    for channel in list(server.active_channels.values()):
        if channel.requests or channel.total_outbufs_len or channel.request is not None:
            return True
    return False
