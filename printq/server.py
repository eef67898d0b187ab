"""Run the Flask app on waitress until SIGTERM or SIGINT, then shut down cleanly."""

from __future__ import annotations

import signal
import sys

from printq.settings import Settings


def _stop(signum: int, frame: object) -> None:
    # waitress' loop exits on SystemExit in the main thread: it closes the listening socket and
    # lets the worker threads finish the requests in flight (up to 5 s) before returning.
    raise SystemExit(0)


def protocol_error_body(code: int, reason: str, detail: str) -> dict:
    """``{"Message": "Bad Request: Content-Length is invalid."}`` for a request waitress cannot parse."""
    if code >= 500 and code != 501:
        return {"Message": "Internal server error."}
    return {"Message": f"{reason}: {detail.rstrip('.')}." if detail else f"{reason}."}


def serve(app, settings: Settings, records: int | None) -> None:
    """Serve ``app`` on ``settings.host:settings.port`` with ``settings.threads`` worker threads."""
    from waitress.server import create_server

    from obsctl.web.protocol_errors import install_json_errors

    server = create_server(app, host=settings.host, port=settings.port, threads=settings.threads,
                           ident="printq", clear_untrusted_proxy_headers=True)
    install_json_errors(server, protocol_error_body)  # waitress' own 400/431/501 answers in JSON too
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    loaded = f"{records} records from {settings.data_path}" if records is not None else "no data yet"
    print(f"printq serving {loaded} on http://{server.effective_host}:{server.effective_port} "
          "(Ctrl-C to stop)", file=sys.stderr, flush=True)
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("printq stopped", file=sys.stderr, flush=True)
