"""`obsctl serve` on the shared runner (obsctl/web/runner.py): threads sized for the writer
queue and the event streams, the open-files limit raised for the connection limit, the request
gate (server_guard.py) and connection limits (connection_guard.py), `{"error": ...}` protocol
errors, and the writers and background workers stopped after the drain.
"""

from __future__ import annotations

import logging
import sys

from obsctl.errors import ServiceUnavailable

log = logging.getLogger("obsctl.server")


def serve(app, *, host: str, port: int, threads: int = 8, drain_seconds: float = 20.0,
          ready_message: bool = True, grpc_port: int | None = None) -> None:
    from obsctl.web import server_guard
    from obsctl.web.protocol_errors import obsctl_error_body
    from obsctl.web.runner import listen, run_until_signalled

    state = app.extensions["obsctl"]
    settings = state.settings
    # Writes wait for the writer queue on threads of their own: at most `capacity` of them,
    # so `threads` stay free for reads however long the database's write lock is held. Each
    # open event stream holds a thread as long as it lasts: those have threads of their own too.
    streams = app.extensions["obsctl_streams"].limit
    all_threads = threads + state.store.writer_capacity + streams
    if streams > threads:
        log.warning("OBSCTL_MAX_STREAMS=%d is more than --threads=%d: %d more threads are kept for "
                    "event streams", streams, threads, streams)
    connection_limit = _allow_open_files(settings.connection_limit, all_threads)
    try:
        server = listen(
            app, host=host, port=port, threads=all_threads, ident="obsctl", error_body=obsctl_error_body,
            # waitress refuses a body at >= max_request_body_size; the limit itself is allowed.
            max_request_body_size=settings.max_body_bytes + 1,
            connection_limit=connection_limit,
            channel_timeout=settings.idle_timeout,
            cleanup_interval=1,
        )
    except OSError as exc:
        # Port in use, no permission, unknown host: a message, not a traceback.
        raise ServiceUnavailable(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    server_guard.install(server, app)
    grpc_server = None
    if grpc_port is not None:
        from obsctl.web.grpc_server import OtlpGrpcServer

        grpc_server = OtlpGrpcServer(app, threads=threads)
        try:
            grpc_port = grpc_server.start(host, grpc_port)
        except ServiceUnavailable:
            server.close()
            raise

    def ready(server) -> None:
        if not ready_message:
            return
        check = (state.db_check or {}).get("quick_check", "not run")
        sys.stderr.write(f"obsctl serving {settings.db_display} on http://{server.effective_host}:"
                         f"{server.effective_port} ({threads} threads, {all_threads - threads - streams} more "
                         f"for queued writes and {streams} for event streams, at most {connection_limit} "
                         f"connections; database quick_check: {check}); Ctrl-C to stop\n")
        if grpc_server is not None:
            sys.stderr.write(f"obsctl serving OTLP/gRPC on {host}:{grpc_port}\n")
        sys.stderr.flush()

    def stopped() -> None:
        if grpc_server is not None:  # calls in progress finish; their writes still reach the store
            grpc_server.stop(drain_seconds)
        for worker in app.extensions.get("obsctl_workers", ()):
            worker.stop()
        state.store.close()

    def stopping() -> None:
        streams = app.extensions.get("obsctl_streams")
        if streams is not None:
            streams.close()

    run_until_signalled(server, drain_seconds=drain_seconds, on_ready=ready, on_stop=stopped,
                        on_stopping=stopping)
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
