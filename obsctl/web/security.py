"""API-key authentication, failed key checks limited per client address (auth_limit.py), and
per-IP rate limits with RateLimit-* headers."""

from __future__ import annotations

import time

from flask import Blueprint, Flask, current_app, g, has_request_context, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from limits import parse as parse_limit

from obsctl.config import Settings
from obsctl.web.auth_limit import AuthFailures, Refusal, presented_key
from obsctl.web.auth_limit import key_problem as api_key_problem  # noqa: F401 (the 401 messages)
from obsctl.web.errors import error_body
from obsctl.web.http import json_response

PUBLIC_PATHS = frozenset({"/health"})
# The dashboard (obsctl/web/ui): `/` and everything under `/ui/`. A browser sends no X-API-Key;
# the dashboard checks its own login instead (obsctl/web/ui/access.py).
DASHBOARD_PREFIX = "/ui/"
_AUTH_FAILURES = "obsctl_auth_failures"


def is_dashboard_path(path: str) -> bool:
    return path == "/" or path == "/ui" or path.startswith(DASHBOARD_PREFIX)
_RATE_LIMITED = "rate limit exceeded; retry after the time in Retry-After"


def needs_api_key(method: str, path: str) -> bool:
    """Every API route but GET /health and CORS preflight needs the key (when one is set); the
    dashboard's pages need its login instead."""
    return method != "OPTIONS" and path not in PUBLIC_PATHS and not is_dashboard_path(path)


def auth_failures(app: Flask | None = None) -> AuthFailures:
    """The app's count of failed key checks per client address (HTTP, gRPC and the dashboard)."""
    return (app or current_app).extensions[_AUTH_FAILURES]


def refusal_response(refusal: Refusal):
    """The JSON answer to a refused key: 401, or 429 with Retry-After."""
    headers = {"Retry-After": str(refusal.retry_after)} if refusal.retry_after else None
    return json_response(error_body(refusal.message), refusal.status, headers)


def install_auth(app: Flask, settings: Settings) -> None:
    """Require `X-API-Key` on every route but GET /health and CORS preflight when a key is set.

    Under `obsctl serve` a request with a body and a wrong key is already refused when its
    headers arrive (obsctl/web/server_guard.py); this check covers every other request.
    """
    app.extensions[_AUTH_FAILURES] = AuthFailures(settings.auth_failure_limit, settings.ratelimit_storage_uri)
    expected = settings.api_key
    if not expected:
        return

    @app.before_request
    def _check_api_key():
        if not needs_api_key(request.method, request.path):
            return None
        provided = presented_key(request.headers.get("X-API-Key"), request.headers.get("Authorization"))
        refusal = auth_failures(app).check(request.remote_addr or "-", provided, expected)
        return refusal_response(refusal) if refusal else None


_HIT_COUNTS = "obsctl_ratelimit_counts"


class _CountRecordingStorage:
    """The rate-limit store, remembering per request the count each of its increments reached.

    flask-limiter computes `remaining` by reading the counter back after the request's hit, so
    requests that hit together all read the latest count and repeat one value. The value
    returned by the store's atomic increment (memory or Redis alike) is this request's own, so
    `RateLimit-Remaining` built from it is exact: concurrent requests see distinct values.
    """

    def __init__(self, storage):
        self._storage = storage

    def incr(self, key: str, *args, **kwargs) -> int:
        count = self._storage.incr(key, *args, **kwargs)
        if has_request_context():
            g.setdefault(_HIT_COUNTS, {})[key] = count
        return count

    def __getattr__(self, name: str):
        return getattr(self._storage, name)


def _remaining(amount: int, key: str, fallback: int) -> int:
    """`amount` minus the count this request's own hit reached (else what the store says now)."""
    count = g.get(_HIT_COUNTS, {}).get(key)
    return fallback if count is None else amount - count


def create_limiter(app: Flask, settings: Settings) -> Limiter:
    """A limiter bound to this app only (no shared state between apps or tests)."""
    limits = settings.rate_limits
    limiter = Limiter(
        key_func=get_remote_address,
        default_limits=[limits["default"]] if limits else None,
        storage_uri=settings.ratelimit_storage_uri,
        # A shared storage (Redis) that goes down: each instance limits on its own in memory
        # until it is back, and GET /health answers 503 meanwhile (routes/health.py).
        in_memory_fallback_enabled=True,
        swallow_errors=True,
        headers_enabled=False,
        strategy="fixed-window",
        enabled=limits is not None,
    )
    limiter.init_app(app)
    if limits is not None:  # the fixed-window strategy counts through `storage.incr`
        limiter.limiter.storage = _CountRecordingStorage(limiter.limiter.storage)  # type: ignore[assignment]

    unrouted = parse_limit(limits["default"]) if limits else None

    @app.after_request
    def _rate_limit_headers(response):
        if limits is None:
            return response
        current = limiter.current_limit
        if current is not None:
            amount, reset_at = current.limit.amount, current.reset_at
            remaining = _remaining(amount, current.key, current.remaining)
        else:
            # No route matched (404/405): flask-limiter checked nothing, so count the request
            # against the default group here; the headers are then on every response.
            key = get_remote_address()
            allowed = limiter.limiter.hit(unrouted, "unrouted", key)
            reset_at, remaining = limiter.limiter.get_window_stats(unrouted, "unrouted", key)
            amount = unrouted.amount
            remaining = _remaining(amount, unrouted.key_for("unrouted", key), remaining)
            if not allowed:
                response = json_response(error_body(_RATE_LIMITED), 429)
        reset_in = max(0, int(reset_at - time.time()))
        response.headers["RateLimit-Limit"] = str(amount)
        response.headers["RateLimit-Remaining"] = str(max(0, remaining))
        response.headers["RateLimit-Reset"] = str(reset_in)
        if response.status_code == 429 and "Retry-After" not in response.headers:
            response.headers["Retry-After"] = str(max(1, reset_in))
        return response

    return limiter


def limit_blueprint(limiter: Limiter, settings: Settings, blueprint: Blueprint, group: str) -> None:
    """Apply the group's per-IP limit, shared by every route of the blueprint."""
    limits = settings.rate_limits
    if limits is None:
        return
    limiter.shared_limit(limits.get(group, limits["default"]), scope=group)(blueprint)
