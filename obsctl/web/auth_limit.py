"""Failed API-key checks, limited per client address (OBSCTL_AUTH_FAILURE_LIMIT, 10/minute).

Every check of a key (the X-API-Key header or an Authorization header, the gRPC x-api-key or
authorization metadata, the dashboard's login form) asks `AuthFailures.check` first. A wrong or missing key counts one failure against the
client's address; once an address has used its allowance, every request from it that needs
the key is answered 429 (gRPC RESOURCE_EXHAUSTED) with the time to wait, whether its key is
right or wrong, until the window ends: an answer that told a right key apart would let the
guessing go on at full speed. Requests with the right key never count, and one address's
failures never touch another's, so a client with the key is only refused when its own address
(or, behind a proxy that is not in OBSCTL_TRUSTED_PROXIES, the proxy's) keeps failing.

The counts live where the rate limits' do (OBSCTL_RATELIMIT_STORAGE_URI): in memory, or in
Redis, shared by every server. When Redis cannot be reached the counts are kept in memory
for a while, as the rate limits are.
"""

from __future__ import annotations

import base64
import hmac
import logging
import threading
import time
from dataclasses import dataclass

log = logging.getLogger("obsctl.server")

TOO_MANY = "too many failed API key attempts from this address; retry after {wait} s"
_NAMESPACE = "obsctl-auth-failures"
# After a failure to reach Redis, use memory for this long before trying Redis again.
_FALLBACK_SECONDS = 10.0


@dataclass(frozen=True)
class Refusal:
    """Why a request may not go on: 401 (`retry_after` None) or 429 with the seconds to wait."""

    status: int
    message: str
    retry_after: int | None = None


def presented_key(api_key_header: str | None, authorization: str | None) -> str:
    """The API key a request presents: the X-API-Key header, else `Authorization: Bearer KEY`,
    else the password of `Authorization: Basic` (the Langfuse SDKs send their public key as the
    user name and their secret key as the password: set the secret key to obsctl's API key).
    An empty string when none is sent."""
    if api_key_header:
        return api_key_header
    if not authorization:
        return ""
    scheme, _, credentials = authorization.strip().partition(" ")
    scheme = scheme.lower()
    credentials = credentials.strip()
    if scheme == "bearer":
        return credentials
    if scheme == "basic":
        try:
            decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return ""
        return decoded.partition(":")[2]
    return ""


def key_problem(provided: str, expected: str) -> str | None:
    """None when `provided` is the key (compared in constant time), else the 401 message."""
    if hmac.compare_digest(provided.encode("utf-8", "replace"), expected.encode()):
        return None
    return "missing API key: send it in the X-API-Key header" if not provided else "invalid API key"


class AuthFailures:
    """The failed key checks of each client address, against one limit."""

    def __init__(self, limit: str | None, storage_uri: str = "memory://"):
        from limits import parse
        from limits.storage import MemoryStorage
        from limits.strategies import FixedWindowRateLimiter

        self.limit = parse(limit) if limit else None
        self._in_memory = FixedWindowRateLimiter(MemoryStorage())
        self._shared = self._on_shared = None
        self._fallback_until = 0.0
        self._lock = threading.Lock()
        if self.limit is not None and not storage_uri.startswith("memory://"):
            from limits.storage import storage_from_string

            options = {"socket_timeout": 1.0, "socket_connect_timeout": 1.0} \
                if storage_uri.startswith(("redis://", "rediss://")) else {}
            self._shared = storage_from_string(storage_uri, **options)
            self._on_shared = FixedWindowRateLimiter(self._shared)

    def check(self, address: str, provided: str, expected: str) -> Refusal | None:
        """None when `provided` is the key and `address` is not over the limit; else the
        refusal (a wrong key is counted)."""
        problem = key_problem(provided, expected)
        wait = self.wait(address) if problem is None else self.failed(address)
        if wait is not None:
            return Refusal(429, TOO_MANY.format(wait=wait), wait)
        return None if problem is None else Refusal(401, problem)

    def wait(self, address: str) -> int | None:
        """Seconds until `address` may try a key again; None when it may now."""
        if self.limit is None:
            return None
        return self._with_storage(lambda strategy: None if strategy.test(self.limit, _NAMESPACE, address)
                                  else self._wait(strategy, address))

    def failed(self, address: str) -> int | None:
        """Count one failed key check of `address`: None while within the allowance, else the
        seconds to wait. The count is one atomic increment, so concurrent failures of one
        address are never let through beyond the allowance."""
        if self.limit is None:
            return None
        return self._with_storage(lambda strategy: None if strategy.hit(self.limit, _NAMESPACE, address)
                                  else self._wait(strategy, address))

    def _wait(self, strategy, address: str) -> int:
        reset_at, _ = strategy.get_window_stats(self.limit, _NAMESPACE, address)
        return max(1, int(reset_at - time.time() + 0.999))

    def _with_storage(self, work):
        """`work(strategy)` on the shared storage, or in memory while it cannot be reached."""
        shared = self._shared
        if shared is None or time.monotonic() < self._fallback_until:
            return work(self._in_memory)
        try:
            return work(self._on_shared)
        except Exception as exc:  # noqa: BLE001 (any failure of the shared store)
            with self._lock:
                if time.monotonic() >= self._fallback_until:
                    log.warning("rate limit storage unavailable (%s); counting failed API key checks "
                                "in memory for %.0f s", type(exc).__name__, _FALLBACK_SECONDS)
                self._fallback_until = time.monotonic() + _FALLBACK_SECONDS
            return work(self._in_memory)
