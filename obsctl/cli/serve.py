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
    threads: int = typer.Option(8, "--threads", min=1, max=256, help="Worker threads."),
    log_level: str = typer.Option("info", "--log-level",
                                  help="debug, info (one access line per request), warning, error."),
) -> None:
    """Serve the HTTP API (waitress). SIGTERM/SIGINT stop it after in-flight requests finish.

    Example: SERVICE_API_KEY=secret obsctl serve --port 3000
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
    app = create_app(settings, serving=True)
    serve(app, host=settings.host, port=settings.port, threads=threads)
