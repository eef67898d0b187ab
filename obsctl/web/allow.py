"""`Allow` lists the methods of the route a path resolves to, not those of its neighbours.

Werkzeug answers OPTIONS (and fills a 405's `Allow`) with the methods of every rule whose pattern
matches the path: `OPTIONS /sessions/compare` listed GET because `/sessions/<session_id>` matches
"compare" too, although the literal route wins for that path. Here the route of a path is the rule
werkzeug matches first (literal segments before variables) and its methods are those of all rules
with that same pattern (blueprints register one rule per method).
"""

from __future__ import annotations

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

_CORS_METHODS = "Access-Control-Allow-Methods"


def route_methods(app: Flask) -> list[str] | None:
    """The sorted methods of the route the current request's path resolves to, or None if none."""
    adapter = app.create_url_adapter(request)
    return None if adapter is None else path_methods(app, adapter)


def path_methods(app: Flask, adapter, path: str | None = None) -> list[str] | None:
    """The sorted methods of the route `path` (default: the adapter's request) resolves to."""
    try:  # every rule accepts OPTIONS (Flask adds it), so this finds the path's route whatever the method
        rule, _ = adapter.match(path, method="OPTIONS", return_rule=True)
    except HTTPException:  # no route at all, or a redirect (trailing slash)
        return None
    methods: set[str] = set()
    for other in app.url_map.iter_rules():
        if other.rule == rule.rule:
            methods |= other.methods or set()
    return sorted(methods)


class ObsctlFlask(Flask):
    """Flask whose `Allow` (automatic OPTIONS, 405) and CORS preflight `Access-Control-Allow-Methods`
    name only the methods of the route the path resolves to."""

    def make_default_options_response(self) -> Response:
        response = self.response_class()
        response.headers["Allow"] = ", ".join(route_methods(self) or ())
        return response

    def process_response(self, response: Response) -> Response:
        response = super().process_response(response)  # after every after_request hook (CORS too)
        fix_allow = response.status_code == 405 and "Allow" in response.headers
        fix_cors = request.method == "OPTIONS" and _CORS_METHODS in response.headers
        if fix_allow or fix_cors:
            methods = route_methods(self)
            if methods:
                if fix_allow:
                    response.headers["Allow"] = ", ".join(methods)
                if fix_cors:
                    response.headers[_CORS_METHODS] = ", ".join(methods)
        return response
