"""Running the app on waitress with a graceful shutdown.

On SIGTERM or SIGINT the server stops accepting connections, lets requests already
received finish and their responses go out (up to a deadline), then exits.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
import time

from obsctl.errors import ServiceUnavailable

log = logging.getLogger("obsctl.server")


def serve(app, *, host: str, port: int, threads: int = 8, drain_seconds: float = 20.0,
          ready_message: bool = True) -> None:
    from waitress import wasyncore
    from waitress.server import create_server

    from obsctl.web import server_guard

    state = app.extensions["obsctl"]
    settings = state.settings
    # Writes wait for the writer queue on threads of their own: at most `capacity` of them,
    # so `threads` stay free for reads however long the database's write lock is held.
    all_threads = threads + state.store.writer_capacity
    connection_limit = _allow_open_files(settings.connection_limit, all_threads)
    try:
        server = create_server(
            app, host=host, port=port, threads=all_threads, ident="obsctl",
            clear_untrusted_proxy_headers=True,
            # waitress refuses a body at >= max_request_body_size; the limit itself is allowed.
            max_request_body_size=settings.max_body_bytes + 1,
            connection_limit=connection_limit,
            channel_timeout=settings.idle_timeout,
            cleanup_interval=1,
        )
    except OSError as exc:
        # Port in use, no permission, unknown host: a message, not a traceback.
        raise ServiceUnavailable(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    from obsctl.web.protocol_errors import install_json_errors, obsctl_error_body

    install_json_errors(server, obsctl_error_body)  # waitress' own 400/431/501 answers in JSON too
    server_guard.install(server, settings)
    stopping = threading.Event()

    def _stop(signum, frame):
        stopping.set()
        server.pull_trigger()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    if ready_message:
        check = (state.db_check or {}).get("quick_check", "not run")
        sys.stderr.write(f"obsctl serving {state.settings.db_path} on http://{server.effective_host}:"
                         f"{server.effective_port} ({threads} threads, {all_threads - threads} more for "
                         f"queued writes, at most {connection_limit} connections; database quick_check: "
                         f"{check}); Ctrl-C to stop\n")
        sys.stderr.flush()
    socket_map = server._map
    try:
        while not stopping.is_set():
            wasyncore.loop(timeout=0.5, map=socket_map, use_poll=True, count=1)
        # Stop accepting, keep the trigger and open channels so responses still go out.
        server.accepting = False
        wasyncore.dispatcher.close(server)
        deadline = time.monotonic() + drain_seconds
        while time.monotonic() < deadline and _busy(server):
            wasyncore.loop(timeout=0.05, map=socket_map, use_poll=True, count=1)
    finally:
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=5)
        for channel in list(server.active_channels.values()):
            with contextlib.suppress(OSError):
                channel.close()
        server.trigger.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for worker in app.extensions.get("obsctl_workers", ()):
            worker.stop()
        state = app.extensions.get("obsctl")
        if state is not None:
            state.store.close()
    sys.stderr.write("obsctl server stopped\n")


def _allow_open_files(connection_limit: int, threads: int) -> int:
    """Raise the soft open-files limit so `connection_limit` connections fit (each can hold a
    socket and a spooled body); if the hard limit is too low, lower the connection limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover (not on POSIX)
        return connection_limit
    spare = 64 + 4 * threads  # database files, WAL, logs, webhook sockets
    needed = 2 * connection_limit + spare
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
        if soft < needed:
            fitted = max(10, (soft - spare) // 2)
            log.warning("open-files limit %d allows %d connections, not %d; raise `ulimit -n`",
                        soft, fitted, connection_limit)
            return fitted
    return connection_limit


def _busy(server) -> bool:
    """True while a request is being handled or a response is still being written."""
    if server.task_dispatcher.queue:
        return True
    for channel in list(server.active_channels.values()):
        if channel.requests or channel.total_outbufs_len or channel.request is not None:
            return True
    return False
