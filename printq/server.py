"""`printq serve` on the shared runner (obsctl/web/runner.py): waitress until SIGTERM or SIGINT,
then the requests in flight finish before it exits; waitress' own protocol errors answer
``{"Message": ...}`` like the app."""

from __future__ import annotations

import sys

from printq.settings import Settings

# Seconds the requests in flight get to finish after SIGTERM or SIGINT.
DRAIN_SECONDS = 10.0


def protocol_error_body(code: int, reason: str, detail: str) -> dict:
    """``{"Message": "Bad Request: Content-Length is invalid."}`` for a request waitress cannot parse."""
    if code >= 500 and code != 501:
        return {"Message": "Internal server error."}
    return {"Message": f"{reason}: {detail.rstrip('.')}." if detail else f"{reason}."}


def serve(app, settings: Settings, records: int | None) -> None:
    """Serve ``app`` on ``settings.host:settings.port`` with ``settings.threads`` worker threads.

    Raises OSError or ValueError when it cannot listen there.
    """
    from obsctl.web.runner import listen, run_until_signalled

    server = listen(app, host=settings.host, port=settings.port, threads=settings.threads,
                    ident="printq", error_body=protocol_error_body)
    loaded = f"{records} records from {settings.data_path}" if records is not None else "no data yet"

    def ready(server) -> None:
        print(f"printq serving {loaded} on http://{server.effective_host}:{server.effective_port} "
              "(Ctrl-C to stop)", file=sys.stderr, flush=True)

    run_until_signalled(server, drain_seconds=DRAIN_SECONDS, on_ready=ready)
    print("printq stopped", file=sys.stderr, flush=True)
