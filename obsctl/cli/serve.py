"""`obsctl serve`: the HTTP API on waitress."""

from __future__ import annotations

import typer

from obsctl.cli.base import settings_of, translate_errors
from obsctl.cli.options import checked, int_option
from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.params import IntParam

LOG_LEVELS = ("debug", "info", "warning", "error")
PORT = IntParam("port", 0, 65535)
THREADS = IntParam("threads", 1, 256, default=8)


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
    threads: int = int_option(THREADS, "--threads", help="Worker threads."),
    log_level: str = typer.Option("info", "--log-level", callback=checked(_check_log_level),
                                  help="debug, info (one access line per request), warning, error."),
) -> None:
    """Serve the HTTP API (waitress). SIGTERM/SIGINT stop it after in-flight requests finish.

    Example: SERVICE_API_KEY=secret obsctl serve --port 3000
    """
    from dataclasses import replace

    from obsctl.web.access_log import configure_logging
    from obsctl.web.app import create_app
    from obsctl.web.server import serve

    configure_logging(log_level)

    settings = settings_of(ctx)
    settings = replace(settings, host=host or settings.host, port=settings.port if port is None else port)
    app = create_app(settings, serving=True)
    serve(app, host=settings.host, port=settings.port, threads=threads)
