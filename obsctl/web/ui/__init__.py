"""The dashboard: `obsctl serve` answers a browser at `/` (the overview) and under `/ui/`.

Server-rendered Jinja2 pages over the same service functions as the CLI and the API, with a
little JavaScript for the charts and live updates (static/dashboard.js, uPlot vendored under
static/vendor/). Every page reads without JavaScript. See docs/dashboard.md.

`install(app)` registers the blueprint; views.py holds the pages, access.py the login, CSRF
tokens and security headers. The scorecard pages are answered from one fleet computation kept
a minute per app (services/dashboard.ResultCache).
"""

from __future__ import annotations

from flask import Flask

from obsctl.web.ui import access


def install(app: Flask, limiter) -> None:
    from obsctl.services.dashboard import ResultCache
    from obsctl.web.security import limit_blueprint
    from obsctl.web.ui.views import CACHE_KEY, blueprint

    access.configure(app)
    app.extensions[CACHE_KEY] = ResultCache()
    # Pages, static files and login attempts count against the default per-IP limit.
    limit_blueprint(limiter, app.extensions["obsctl"].settings, blueprint, "default")
    app.register_blueprint(blueprint)
