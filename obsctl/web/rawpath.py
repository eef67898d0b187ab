"""Routing on the path as the client wrote it, so any id can be named in a URL.

A WSGI server percent-decodes the path before the app sees it: `/sessions/team%2Frun-1` reaches
Flask as `/sessions/team/run-1`, and a session id holding a slash could not be told from a
longer path (`team/run-1/explain`). Here the app routes on the path as it was sent, its
escapes kept (`REQUEST_URI`, which waitress and Werkzeug both provide), and every URL variable
is decoded by its converter. So:

- `/sessions/team%2Frun-1` names the session `team/run-1`; `/sessions/team/run-1` still does
  too, as before;
- `/sessions/%2E%2E` names the session `..` (a client must escape dot segments, which HTTP
  libraries otherwise resolve away);
- an escaped literal is an id, not the literal: `/triage/%62atch` is the triage of a session
  named `batch`, while `/triage/batch` stays the batch route the specification fixes.

Literal route segments never hold a `%`, so plain requests route as they always did.
"""

from __future__ import annotations

from urllib.parse import unquote, unquote_to_bytes, urlsplit

from werkzeug.routing import PathConverter, UnicodeConverter, ValidationError


def _decoded(value: str) -> str:
    if "%" not in value:
        return value
    try:
        return unquote(value, errors="strict")
    except UnicodeDecodeError:  # not UTF-8: no id is named so; the route does not match (404)
        raise ValidationError() from None


class RawPathRouting:
    """WSGI middleware: PATH_INFO becomes the path as sent, escapes kept, whenever it is the same
    path once decoded (no mount prefix, nothing rewritten on the way). Otherwise every `%` of the
    decoded path is escaped again, so that the converters' decoding gives the path back exactly."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        environ["PATH_INFO"] = routing_path(environ.get("PATH_INFO", ""),
                                            environ.get("REQUEST_URI") or environ.get("RAW_URI") or "",
                                            environ.get("SCRIPT_NAME", ""))
        return self.app(environ, start_response)


def routing_path(path_info: str, request_uri: str, script_name: str = "") -> str:
    """The path the app routes on (see RawPathRouting), from the decoded path and the request
    line's URI (also for the request gate, which routes before the app sees the request)."""
    if "%" in request_uri:
        raw_path = request_uri.split("?", 1)[0].split("#", 1)[0]
        if not raw_path.startswith("/"):  # absolute form: http://host/path
            raw_path = urlsplit(raw_path).path
        if not script_name and unquote_to_bytes(raw_path).decode("latin-1") == path_info:
            return raw_path
    return path_info.replace("%", "%25") if "%" in path_info else path_info


class DecodedString(UnicodeConverter):
    """One path segment, percent-decoded (UTF-8)."""

    def to_python(self, value: str) -> str:
        return _decoded(value)


class DecodedPath(PathConverter):
    """One or more path segments, percent-decoded (UTF-8): a `%2F` is a slash inside the value."""

    def to_python(self, value: str) -> str:
        return _decoded(value)


class SessionPath(DecodedPath):
    """A session id as a path that does not end with a session's sub-resource written raw
    (`/explain`, `/export`, `/tags`, `/scores`): `DELETE /sessions/a/explain` is then a method
    the explain route does not allow (405), not the deletion of a session `a/explain`, whose
    id is sent escaped (`/sessions/a%2Fexplain`) as every id with a slash is."""

    regex = r"[^/].*?(?<!/explain)(?<!/export)(?<!/tags)(?<!/scores)"


def install(app) -> None:
    """Route `app` on raw paths. Call before any rule is added: rules take their converters
    from the map when they are added."""
    app.url_map.converters.update(default=DecodedString, string=DecodedString, path=DecodedPath,
                                  session_path=SessionPath)
    app.wsgi_app = RawPathRouting(app.wsgi_app)
