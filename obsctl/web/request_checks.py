"""Checks every request and response goes through, whatever the route.

- A NUL character in a query parameter (name or value), a path variable or a dashboard form field
  is a 400: no id, filter or text obsctl stores or looks up holds one, and PostgreSQL cannot
  even be asked about one (SQLite could; both stores answer the same).
- A redirect's Location is a path on this server, never built from the request's Host header:
  werkzeug's own redirects (`/sessions//x` -> `/sessions/x`) name the host the client sent,
  which a cache or a link could make another site.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from flask import Flask, request

from obsctl.errors import InvalidInput

_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def install(app: Flask) -> None:
    @app.before_request
    def _refuse_nul_bytes():
        for name, value in request.args.items(multi=True):
            if "\x00" in name or "\x00" in value:
                raise InvalidInput(f"query parameter {_shown(name)} must not contain a NUL character")
        for name, value in (request.view_args or {}).items():
            if isinstance(value, str) and "\x00" in value:
                raise InvalidInput(f"{name} must not contain a NUL character")
        if request.mimetype in _FORMS:
            for name, value in request.form.items(multi=True):
                if "\x00" in name or "\x00" in value:
                    raise InvalidInput(f"form field {_shown(name)} must not contain a NUL character")
        return None

    @app.after_request
    def _relative_location(response):
        location = response.headers.get("Location")
        if location:
            response.headers["Location"] = relative_location(location)
        return response


def relative_location(location: str) -> str:
    """`location` as a path on this server (absolute URLs lose their scheme and host)."""
    parts = urlsplit(location)
    if not parts.scheme and not parts.netloc and not location.startswith("//"):
        return location
    path = "/" + (parts.path or "/").lstrip("/")  # never `//host`: that is another site again
    return urlunsplit(("", "", path, parts.query, parts.fragment))


def _shown(name: str) -> str:
    return repr(name.replace("\x00", "\\0")[:40])
