"""The Flask app factory: `create_app(settings)` builds a fresh, self-contained app."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask
from flask.json.provider import DefaultJSONProvider
from flask_cors import CORS

from obsctl.config import Settings
from obsctl.services.storage import Store, open_store
from obsctl.web import rawpath, request_checks
from obsctl.web.access_log import install_access_log
from obsctl.web.allow import ObsctlFlask
from obsctl.web.errors import register_error_handlers
from obsctl.web.routes import route_modules
from obsctl.web.security import create_limiter, install_auth, limit_blueprint

# Without `serve --threads` to size it by (the Flask test client, other WSGI servers).
DEFAULT_WRITE_QUEUE = 8


@dataclass
class AppState:
    settings: Settings
    # The server's store: a connection per thread, writes through one writer queue.
    store: Store
    # The database check `obsctl serve` ran at start (services.maintenance.check_integrity).
    db_check: dict | None = None


def create_app(settings: Settings | None = None, *, serving: bool = False,
               db_check: dict | None = None) -> Flask:
    """Build the obsctl HTTP API for `settings` (default: from the environment).

    `db_check` is the integrity check run at start, reported by GET /health.

    `serving` (only `obsctl serve`) also starts the route modules' background workers (their
    `start_background(app)`), kept in app.extensions["obsctl_workers"] for the server to stop.
    """
    settings = settings or Settings.from_env()
    app = ObsctlFlask("obsctl")  # Allow names only the methods of the path's own route
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    if isinstance(app.json, DefaultJSONProvider):  # always: the app keeps Flask's provider
        app.json.sort_keys = False
    rawpath.install(app)  # before any route: ids with `/`, `%` or dots are reachable
    store = open_store(settings, mode="server", write_queue=settings.write_queue or DEFAULT_WRITE_QUEUE,
                       write_timeout=settings.write_timeout)
    app.extensions["obsctl"] = AppState(settings=settings, store=store, db_check=db_check)
    install_access_log(app)

    CORS(app, origins=list(settings.cors_origins),
         expose_headers=["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After"])
    limiter = create_limiter(app, settings)
    app.extensions["obsctl_limiter"] = limiter  # OTLP/gRPC counts against the same limits
    install_auth(app, settings)
    request_checks.install(app)  # NUL bytes in parameters, relative redirects
    register_error_handlers(app)

    for module in route_modules():
        limit_blueprint(limiter, settings, module.blueprint, module.RATE_GROUP)
        app.register_blueprint(module.blueprint)

    from obsctl.web.openapi import blueprint as openapi_blueprint

    limit_blueprint(limiter, settings, openapi_blueprint, "default")
    app.register_blueprint(openapi_blueprint)

    from obsctl.web.ui import install as install_dashboard

    install_dashboard(app, limiter)
    if serving:
        app.extensions["obsctl_workers"] = [
            module.start_background(app) for module in route_modules() if hasattr(module, "start_background")
        ]
    return app
