"""`obsctl serve`: the HTTP API on waitress."""

from __future__ import annotations

import typer

from obsctl.cli.base import settings_of, translate_errors


@translate_errors
def serve_command(
    ctx: typer.Context,
    host: str | None = typer.Option(None, "--host", help="Interface to bind [default: 127.0.0.1]."),
    port: int | None = typer.Option(None, "--port", min=0, max=65535,
                                       help="Port [default: $PORT or 3000]."),
    threads: int = typer.Option(8, "--threads", min=1, max=256,
                                help="Request threads; writes waiting for the database take extra ones."),
    log_level: str = typer.Option("info", "--log-level",
                                  help="debug, info (one access line per request), warning, error."),
    connection_limit: int | None = typer.Option(
        None, "--connection-limit", min=10,
        help="Open connections at most; more wait to be accepted [default: $OBSCTL_CONNECTION_LIMIT or 1000]."),
    idle_timeout: int | None = typer.Option(
        None, "--idle-timeout", min=1,
        help="Seconds before an idle connection is closed [default: $OBSCTL_IDLE_TIMEOUT or 30]."),
    header_timeout: int | None = typer.Option(
        None, "--header-timeout", min=1,
        help="Seconds a client has to send a request's headers [default: $OBSCTL_HEADER_TIMEOUT or 10]."),
    write_queue: int | None = typer.Option(
        None, "--write-queue", min=1, max=256,
        help="Writes that may wait for the database at once; more get 503 "
             "[default: $OBSCTL_WRITE_QUEUE or --threads]."),
    write_timeout: int | None = typer.Option(
        None, "--write-timeout", min=1,
        help="Seconds a write may wait for the database before a 503 [default: $OBSCTL_WRITE_TIMEOUT or 10]."),
    skip_check: bool = typer.Option(
        False, "--skip-check",
        help="Start without SQLite's quick_check of the database (it reads the whole file)."),
) -> None:
    """Serve the HTTP API (waitress). SIGTERM/SIGINT stop it after in-flight requests finish.

    Bodies over OBSCTL_MAX_BODY_BYTES and requests without the API key are refused from their
    headers; slow or idle connections are closed after the timeouts. For public exposure run
    it behind a reverse proxy that terminates TLS.

    Writes go through one writer queue: while another process holds the database's write
    lock, reads keep answering and writes wait up to --write-timeout, then get 503.

    At start SQLite's quick_check reads the whole database; a damaged file is refused
    (--skip-check starts anyway). The result is in GET /health.

    Example: SERVICE_API_KEY=secret obsctl serve --port 3000 --connection-limit 500
    """
    from dataclasses import replace

    from obsctl.errors import InvalidInput
    from obsctl.web.access_log import configure_logging
    from obsctl.web.app import create_app
    from obsctl.web.server import serve

    if log_level.lower() not in ("debug", "info", "warning", "error"):
        raise InvalidInput(f"--log-level must be debug, info, warning or error; got {log_level!r}")
    configure_logging(log_level)

    settings = settings_of(ctx)
    settings = replace(settings, host=host or settings.host, port=settings.port if port is None else port)
    overrides = {"connection_limit": connection_limit, "idle_timeout": idle_timeout,
                 "header_timeout": header_timeout, "write_queue": write_queue,
                 "write_timeout": write_timeout}
    settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
    settings = replace(settings, write_queue=settings.write_queue or threads)
    check = _check_database(settings, skip_check)
    app = create_app(settings, serving=True, db_check=check)
    serve(app, host=settings.host, port=settings.port, threads=threads)


def _check_database(settings, skip: bool) -> dict:
    """Create or migrate the database, then quick_check it unless skipped; refuse a damaged one."""
    from obsctl.errors import ObsctlError
    from obsctl.services import maintenance
    from obsctl.store.db import open_db

    db = open_db(settings)
    try:
        check = maintenance.skipped_check() if skip else maintenance.check_integrity(db)
    finally:
        db.close()
    if check["quick_check"] == "damaged":
        raise ObsctlError(maintenance.damaged_message(settings.db_path, check))
    return check
