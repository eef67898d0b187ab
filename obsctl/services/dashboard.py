"""What the dashboard shows that no other use case returns whole: the overview's series over
time, and the key that signs its session cookies. Everything else the dashboard renders comes
from the same service functions as the CLI and the API (sessions, triage, alerts, ...).

- `overview(store, settings, window="24h")`: the analytics document (totals, agents, models,
  sessions and tokens per day) plus, per bucket of the window (6h or 24h), events, errors,
  error rate, sessions, tokens, cost and the p50/p95 of event durations: the alert metrics'
  window reads (services/metrics.py) per bucket.
- `ResultCache`: what the slowest pages compute (the scorecards: a week of every agent's
  events), kept per server for `ttl` seconds (SCORECARDS_TTL_S) and shared by every browser.
- `signing_key(store, settings)`: OBSCTL_SECRET_KEY, else a key generated once and kept in the
  database (migration m018), so every server on one database accepts the same cookies.
- Logins (`open_login`, `check_login`, `close_login`): a login is a random token in the
  browser's cookie and a row in the database (migration m029, the token's SHA-256), shared by
  every server. It ends at logout, after LOGIN_IDLE unused, LOGIN_LIFETIME after it began, or
  when the API key changes (the row keeps a proof of the key it logged in with).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime, timedelta
from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.services.analytics import get_analytics
from obsctl.services.metrics import duration_percentile, window_cost
from obsctl.store import Store
from obsctl.timeutil import format_ts, now, now_iso

LOGIN_IDLE = timedelta(hours=12)
LOGIN_LIFETIME = timedelta(days=7)
# A login's last use is written at most this often, not on every page.
LOGIN_TOUCH = timedelta(minutes=5)

# window -> (length, bucket): 24 buckets each. Each bucket is one window of the alert metrics
# (services/metrics.py), read from the events, so the cost grows with the events of the window:
# at 1M events over 30 days a day holds ~33k. Longer views come from the analytics rollup
# (sessions and tokens per day over 90 days).
WINDOWS: dict[str, tuple[timedelta, timedelta]] = {
    "6h": (timedelta(hours=6), timedelta(minutes=15)),
    "24h": (timedelta(hours=24), timedelta(hours=1)),
}
DEFAULT_WINDOW = "24h"


def check_window(window: str | None) -> str:
    if window is None or window == "":
        return DEFAULT_WINDOW
    if window not in WINDOWS:
        raise InvalidInput(f"window must be one of {', '.join(WINDOWS)}; got {describe_value(window)}")
    return window


def _bucket_starts(at: datetime, length: timedelta, step: timedelta) -> list[datetime]:
    """Bucket starts aligned on whole steps (from midnight UTC), the last one holding `at`."""
    midnight = at.replace(hour=0, minute=0, second=0, microsecond=0)
    last = midnight + ((at - midnight) // step) * step
    count = int(length / step)
    return [last - step * i for i in range(count - 1, -1, -1)]


def overview(store: Store, settings, *, window: str | None = None, at: datetime | None = None) -> dict:
    """Totals (the analytics document) and the window's series, one point per bucket."""
    window = check_window(window)
    length, step = WINDOWS[window]
    at = at or now()
    analytics = get_analytics(store, at=at)
    points = []
    with store.read_snapshot():
        for start in _bucket_starts(at, length, step):
            since, until = format_ts(start), format_ts(start + step)
            agg = store.metrics.event_aggregates(since, until, None)
            count = agg["durations"]
            points.append({
                "t": int(start.timestamp()),
                "events": agg["events"],
                "errors": agg["errors"],
                "error_rate": round(100.0 * agg["errors"] / agg["events"], 2) if agg["events"] else None,
                "sessions": agg["sessions"],
                "tokens": agg["tokens"],
                "cost": _round(window_cost(store, since, until, None) if agg["events"] else None, 6),
                "p50_ms": duration_percentile(store, since, until, None, count, 50),
                "p95_ms": duration_percentile(store, since, until, None, count, 95),
            })
    # The models' costs as stored at ingest (analytics' costs section).
    costs = {m["model"]: m["cost_usd"] for m in analytics["costs"]["by_model"]}
    for model in analytics["model_usage"]:
        model["cost"] = _round(costs.get(model["model"]), 6)
    return {"window": window, "bucket_seconds": int(step.total_seconds()), "series": points,
            "analytics": analytics}


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def signing_key(store: Store, settings) -> str:
    """The key that signs the dashboard's cookies (see the module docstring)."""
    if settings.secret_key:
        return settings.secret_key
    with store.read_snapshot():
        stored = store.dashboard.get_secret()
    if stored:
        return stored
    with store.transaction():
        return store.dashboard.keep_secret(secrets.token_urlsafe(32), now_iso())


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def open_login(store: Store, key_proof: str, *, at: datetime | None = None) -> str:
    """Start a login with the key `key_proof` proves; the token for the browser's cookie.
    Logins that have ended by time are deleted on the way."""
    at = at or now()
    token = secrets.token_urlsafe(32)
    with store.transaction():
        store.dashboard.prune_logins(format_ts(at - LOGIN_IDLE), format_ts(at - LOGIN_LIFETIME))
        store.dashboard.add_login(_token_hash(token), key_proof, format_ts(at))
    return token


def check_login(store: Store, token: object, key_proof: str, *, at: datetime | None = None) -> bool:
    """True when `token` is a login that has not ended and was made with the key `key_proof`
    proves; its last use is then noted (at most every LOGIN_TOUCH)."""
    if not isinstance(token, str) or not token:
        return False
    at = at or now()
    token_hash = _token_hash(token)
    with store.read_snapshot():
        login = store.dashboard.get_login(token_hash)
    if login is None or not hmac.compare_digest(login["key_proof"].encode(), key_proof.encode()):
        return False
    if login["created_at"] < format_ts(at - LOGIN_LIFETIME) or login["last_seen_at"] < format_ts(at - LOGIN_IDLE):
        return False
    if login["last_seen_at"] < format_ts(at - LOGIN_TOUCH):
        with store.transaction():
            store.dashboard.touch_login(token_hash, format_ts(at))
    return True


def close_login(store: Store, token: object) -> bool:
    """End a login (logout); False when `token` was none."""
    if not isinstance(token, str) or not token:
        return False
    with store.transaction():
        return store.dashboard.delete_login(_token_hash(token))


# A scorecard covers days; a minute more or less moves it little, and computing the fleet's
# takes about a second at 1M events.
SCORECARDS_TTL_S = 60.0


class ResultCache:
    """Results kept `ttl` seconds per key, at most `max_entries` of them (the least recently
    used go first). `get(key, compute)` returns the kept result or `compute()`'s, computed
    once however many requests ask at the same time; an exception is never kept."""

    def __init__(self, ttl: float = SCORECARDS_TTL_S, max_entries: int = 256,
                 clock: Callable[[], float] = time.monotonic):
        self.ttl = ttl
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._computing: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    def _kept(self, key: Hashable) -> tuple[bool, Any]:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self._clock():
            return False, None
        self._entries.move_to_end(key)
        return True, entry[1]

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            found, value = self._kept(key)
            if found:
                return value
            computing = self._computing.setdefault(key, threading.Lock())
        with computing:
            with self._lock:
                found, value = self._kept(key)  # computed by the request we waited for
            if found:
                return value
            try:
                value = compute()
                with self._lock:
                    self._entries[key] = (self._clock() + self.ttl, value)
                    while len(self._entries) > self._max:
                        self._entries.popitem(last=False)
            finally:
                with self._lock:
                    self._computing.pop(key, None)
            return value
