"""Who may see the dashboard, and the headers every dashboard response carries.

- Cookie: Flask's signed cookie (`obsctl_session`: HttpOnly, SameSite=Strict, Secure when
  OBSCTL_PUBLIC_URL is https), signed with services.dashboard.signing_key (OBSCTL_SECRET_KEY,
  else a key kept in the database). API requests never open it: only dashboard paths do.
- Login: with SERVICE_API_KEY set, every dashboard page but the login page and the static files
  needs a login. Logging in with the key puts a random token in the cookie and a row in the
  database (services.dashboard.open_login), so a login ends at logout on every server, after
  12 hours unused or 7 days, and when SERVICE_API_KEY changes. Without a key the dashboard is
  open, as the API is.
- CSRF: every POST (login and logout included) carries the session's token in a hidden field.
  Under `obsctl serve` a POST's body is read only if the cookie is this dashboard's (and, but
  for the login form, holds a login), and only up to FORM_MAX_BYTES (obsctl/web/server_guard.py).
- Headers: a Content-Security-Policy without inline scripts or styles, frame-ancestors 'none'
  and X-Frame-Options DENY, nosniff, no referrer beyond the origin, no caching of pages.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from urllib.parse import urlsplit

from flask import Flask, abort, current_app, g, request, session
from flask.sessions import SecureCookieSessionInterface

from obsctl.services.dashboard import check_login, close_login, open_login, signing_key
from obsctl.web.security import is_dashboard_path

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'; object-src 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
_KEY = "obsctl_dashboard_key"
COOKIE_NAME = "obsctl_session"
# The largest dashboard form body read (login: the key, the CSRF token and the page to go back to).
FORM_MAX_BYTES = 4096
_KEY_LOCK = threading.Lock()


def _store_and_settings(app: Flask):
    state = app.extensions["obsctl"]
    return state.store, state.settings


def app_signing_key(app: Flask) -> str:
    """The signing key, read (or generated) once per app."""
    key = app.extensions.get(_KEY)
    if key is None:
        with _KEY_LOCK:
            key = app.extensions.get(_KEY)
            if key is None:
                key = app.extensions[_KEY] = signing_key(*_store_and_settings(app))
    return key


class DashboardSessionInterface(SecureCookieSessionInterface):
    """Signed cookie sessions for dashboard paths only, keyed by the app's signing key."""

    def get_signing_serializer(self, app: Flask):
        from itsdangerous import URLSafeTimedSerializer

        return URLSafeTimedSerializer(app_signing_key(app), salt="obsctl-dashboard",
                                      serializer=self.serializer,
                                      signer_kwargs={"key_derivation": "hmac", "digest_method": hashlib.sha256})

    def open_session(self, app: Flask, request):
        if not is_dashboard_path(request.path):
            return None  # Flask makes it a null session: nothing read, nothing written
        return super().open_session(app, request)


def configure(app: Flask) -> None:
    settings = app.extensions["obsctl"].settings
    app.session_interface = DashboardSessionInterface()
    app.config.update(
        SESSION_COOKIE_NAME=COOKIE_NAME,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_SECURE=bool(settings.public_url and settings.public_url.startswith("https://")),
        # Browser sessions: the cookie goes when the browser closes, or at logout.
        SESSION_REFRESH_EACH_REQUEST=False,
    )


def cookie_session(app: Flask, cookie_header: str | None) -> dict | None:
    """The dashboard session in a `Cookie` header when this app signed it, else None (for the
    request gate, which runs before the app sees the request)."""
    from itsdangerous import BadSignature
    from werkzeug.http import parse_cookie

    value = parse_cookie(cookie_header or "").get(COOKIE_NAME)
    if not value:
        return None
    interface = app.session_interface
    serializer = interface.get_signing_serializer(app) if isinstance(interface, SecureCookieSessionInterface) else None
    if serializer is None:
        return None
    try:
        data = serializer.loads(value, max_age=int(app.permanent_session_lifetime.total_seconds()))
    except BadSignature:
        return None
    return data if isinstance(data, dict) else None


def key_proof(api_key: str) -> str:
    """What a login is tied to: an HMAC of the API key under the signing key."""
    return hmac.new(app_signing_key(current_app).encode(), api_key.encode(), hashlib.sha256).hexdigest()


def login_required() -> bool:
    return bool(_store_and_settings(current_app)[1].api_key)


def logged_in() -> bool:
    store, settings = _store_and_settings(current_app)
    if not settings.api_key:
        return True
    known = g.get("obsctl_logged_in")
    if known is None:  # one database read per request
        known = g.obsctl_logged_in = check_login(store, session.get("login"), key_proof(settings.api_key))
    return known


def log_in(api_key: str) -> None:
    token = open_login(_store_and_settings(current_app)[0], key_proof(api_key))
    session.clear()
    session["login"] = token
    session["csrf"] = secrets.token_urlsafe(32)
    g.obsctl_logged_in = True


def log_out() -> None:
    close_login(_store_and_settings(current_app)[0], session.get("login"))
    session.clear()
    g.obsctl_logged_in = False


def csrf_token() -> str:
    token = session.get("csrf")
    if not isinstance(token, str):
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


def check_csrf() -> None:
    """A POST without this session's token is refused (400)."""
    sent = request.form.get("csrf_token", "")
    token = session.get("csrf")
    if not isinstance(token, str) or not hmac.compare_digest(sent.encode(), token.encode()):
        abort(400, "the form has expired or did not come from this dashboard: reload the page and try again")


def safe_next(target: str | None, default: str) -> str:
    """A same-site path to go back to after login (never another host)."""
    if not target:
        return default
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") \
            or "\\" in target:
        return default
    return target


def add_security_headers(response):
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    if response.mimetype == "text/html" or response.mimetype == "text/event-stream":
        response.headers["Cache-Control"] = "no-store"
    return response
