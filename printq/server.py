"""Run the Flask app on waitress until SIGTERM or SIGINT, then shut down cleanly."""

from __future__ import annotations

import signal
import sys

from printq.settings import Settings


def _stop(signum: int, frame: object) -> None:
    # waitress' loop exits on SystemExit in the main thread: it closes the listening socket and
    # lets the worker threads finish the requests in flight (up to 5 s) before returning.
    raise SystemExit(0)


def serve(app, settings: Settings, records: int | None) -> None:
    """Serve ``app`` on ``settings.host:settings.port`` with ``settings.threads`` worker threads."""
    from waitress.server import create_server

    server = create_server(app, host=settings.host, port=settings.port, threads=settings.threads,
                           ident="printq", clear_untrusted_proxy_headers=True)
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
