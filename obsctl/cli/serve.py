"""`obsctl serve`: the HTTP API on waitress."""

from __future__ import annotations

from typing import Any

import typer

from obsctl.cli.base import EXIT_USAGE, error, local_only, settings_of, translate_errors
from obsctl.cli.options import checked, int_option
from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.params import IntParam

LOG_LEVELS = ("debug", "info", "warning", "error")
PORT = IntParam("port", 0, 65535)
THREADS = IntParam("threads", 1, 256, default=8)
CONNECTION_LIMIT = IntParam("connection_limit", 10, 100_000)
IDLE_TIMEOUT = IntParam("idle_timeout", 1, 86_400)
HEADER_TIMEOUT = IntParam("header_timeout", 1, 3_600)
WRITE_QUEUE = IntParam("write_queue", 1, 256)
WRITE_TIMEOUT = IntParam("write_timeout", 1, 3_600)
OTLP_GRPC_PORT = IntParam("otlp_grpc_port", 0, 65535)


def _check_log_level(value: str) -> str:
    if value.lower() not in LOG_LEVELS:
        raise InvalidInput(f"log level must be one of {', '.join(LOG_LEVELS)}; got {describe_value(value)}")
    return value


@translate_errors
def serve_command(
    ctx: typer.Context,
    host: str | None = typer.Option(None, "--host", help="Interface to bind [default: 127.0.0.1]."),
    port: int | None = int_option(PORT, "--port", help="Port (0: any free port)", default=None,
                                  show_default="$PORT or 3000"),
    threads: int = int_option(THREADS, "--threads",
                              help="Request threads; writes waiting for the database take extra ones."),
    log_level: str = typer.Option("info", "--log-level", callback=checked(_check_log_level),
                                  help="debug, info (one access line per request), warning, error."),
    connection_limit: int | None = int_option(
        CONNECTION_LIMIT, "--connection-limit", default=None,
        help="Open connections at most; more wait to be accepted",
        show_default="$OBSCTL_CONNECTION_LIMIT or 1000"),
    idle_timeout: int | None = int_option(
        IDLE_TIMEOUT, "--idle-timeout", default=None,
        help="Seconds before an idle connection is closed", show_default="$OBSCTL_IDLE_TIMEOUT or 30"),
    header_timeout: int | None = int_option(
        HEADER_TIMEOUT, "--header-timeout", default=None,
        help="Seconds a client has to send a request's headers",
        show_default="$OBSCTL_HEADER_TIMEOUT or 10"),
    write_queue: int | None = int_option(
        WRITE_QUEUE, "--write-queue", default=None,
        help="Writes that may wait for the database at once; more get 503",
        show_default="$OBSCTL_WRITE_QUEUE or --threads"),
    write_timeout: int | None = int_option(
        WRITE_TIMEOUT, "--write-timeout", default=None,
        help="Seconds a write may wait for the database before a 503",
        show_default="$OBSCTL_WRITE_TIMEOUT or 10"),
    otlp_grpc_port: int | None = int_option(
        OTLP_GRPC_PORT, "--otlp-grpc-port", default=None,
        help="Also accept OTLP/gRPC trace and log export on this port (4317 by convention; "
             "0: any free port; needs the grpc extra)",
        show_default="$OBSCTL_OTLP_GRPC_PORT or off"),
    skip_check: bool = typer.Option(
        False, "--skip-check",
        help="Start without SQLite's quick_check of the database (it reads the whole file)."),
    get: str | None = typer.Option(
        None, "--get", metavar="PATH",
        help="Do not listen: answer one GET request for PATH in-process, print the body, "
             "exit 1 unless 2xx."),
) -> None:
    """Serve the HTTP API (waitress). SIGTERM/SIGINT stop it after in-flight requests finish.

    Bodies over OBSCTL_MAX_BODY_BYTES, without the API key or where no route takes one are
    refused from their headers; wrong keys are limited per client address; slow headers and
    bodies, idle connections and crowds from one address are cut off (docs/security.md). For
    public exposure run it behind a reverse proxy that terminates TLS.

    Writes go through one writer queue: while another process holds the database's write
    lock, reads keep answering and writes wait up to --write-timeout, then get 503.

    At start SQLite's quick_check reads the whole database; a damaged file is refused
    (--skip-check starts anyway). The result is in GET /health.

    --get PATH answers one GET request in-process with the same settings (sending the
    configured API key) instead of listening, prints the response body and exits 0 on a 2xx
    status, else 1: the API from a script without a port.

    --otlp-grpc-port also serves OTLP/gRPC (TraceService and LogsService Export) with the
    same API key (x-api-key metadata), body limit and rate limit; it needs grpcio
    (pip install 'obsctl[grpc]').

    Examples: SERVICE_API_KEY=secret obsctl serve --port 3000 --connection-limit 500;
    obsctl serve --otlp-grpc-port 4317; obsctl serve --get /sessions
    """
    from dataclasses import replace

    from obsctl.web.access_log import configure_logging
    from obsctl.web.app import create_app
    from obsctl.web.server import serve

    local_only(ctx, "obsctl serve")
    settings = settings_of(ctx)
    settings = replace(settings, host=host or settings.host, port=settings.port if port is None else port)
    overrides: dict[str, Any] = {"connection_limit": connection_limit, "idle_timeout": idle_timeout,
                 "header_timeout": header_timeout, "write_queue": write_queue,
                 "write_timeout": write_timeout}
    settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
    settings = replace(settings, write_queue=settings.write_queue or threads,
                       max_streams=settings.max_streams or max(1, threads // 2))
    if otlp_grpc_port is not None:
        settings = replace(settings, otlp_grpc_port=otlp_grpc_port)
    if settings.otlp_grpc_port is not None and get is None:
        from obsctl.web.grpc_server import grpc_missing

        missing = grpc_missing()
        if missing:
            error(missing)
            raise typer.Exit(EXIT_USAGE)
    if get is not None:
        raise typer.Exit(_answer_one_get(create_app(settings), settings, get))
    # Only a serving process logs: `--get` runs in the caller's process and leaves its logging alone.
    configure_logging(log_level)
    check = _check_database(settings, skip_check)
    app = create_app(settings, serving=True, db_check=check)
    serve(app, host=settings.host, port=settings.port, threads=threads, grpc_port=settings.otlp_grpc_port)


def _answer_one_get(app, settings, path: str) -> int:
    """Run GET `path` against `app` in-process, print the body; the exit code (0 on 2xx, else 1)."""
    headers = {"X-API-Key": settings.api_key} if settings.api_key else {}
    try:
        response = app.test_client().get(path, headers=headers)
    finally:
        app.extensions["obsctl"].store.close()
    print(response.get_data(as_text=True))
    return 0 if 200 <= response.status_code < 300 else 1


def _check_database(settings, skip: bool) -> dict:
    """Create or migrate the database, then quick_check it unless skipped; refuse a damaged one."""
    from obsctl.errors import ObsctlError
    from obsctl.services import maintenance
    from obsctl.services.storage import open_store

    store = open_store(settings, mode="create")
    try:
        check = maintenance.skipped_check() if skip else maintenance.check_integrity(store)
    finally:
        store.close()
    if check["quick_check"] == "damaged":
        raise ObsctlError(maintenance.damaged_message(settings.db_path, check))
    return check
