"""Settings: one object built from environment variables and CLI options.

Precedence is CLI option > environment variable > default. The object is passed down
explicitly (Typer context, `create_app(settings)`); nothing reads the environment later.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from obsctl.errors import InvalidInput

# Route groups for per-IP rate limits. Spec numbers for events/sessions/analytics; the
# other groups follow DECISIONS.md.
DEFAULT_RATE_LIMITS: dict[str, str] = {
    "events": "60/minute",
    "sessions": "120/minute",
    "analytics": "120/minute",
    "alerts": "120/minute",
    "webhooks": "120/minute",
    "triage": "120/minute",
    "incidents": "120/minute",
    "changes": "120/minute",
    "postmortem": "120/minute",
    "sla": "120/minute",
    "scorecards": "120/minute",
    "maintenance": "120/minute",
    "configuration": "120/minute",
    "health": "600/minute",
    "default": "120/minute",
}

_LIMIT_RE = re.compile(r"^\d+\s*(/|per)\s*\d*\s*(second|minute|hour|day)s?$")
DEFAULT_MAX_FUTURE_SKEW = timedelta(days=1)
_SKEW_RE = re.compile(r"^([0-9]{1,9})\s*([smhdw]?)$")
_SKEW_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_FUTURE_SKEW_DAYS = 36500


def default_db_path(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "obsctl" / "obsctl.db"


def parse_rate_limits(text: str | None) -> dict[str, str] | None:
    """Parse `OBSCTL_RATE_LIMITS`: None/empty = defaults, `off` = disabled (returns None),
    or `group=N/period,...` overriding some groups."""
    limits = dict(DEFAULT_RATE_LIMITS)
    if text is None or not text.strip():
        return limits
    if text.strip().lower() == "off":
        return None
    for part in text.split(","):
        if not part.strip():
            continue
        group, sep, value = part.partition("=")
        group, value = group.strip().lower(), value.strip()
        if not sep or group not in DEFAULT_RATE_LIMITS or not _LIMIT_RE.match(value):
            raise InvalidInput(
                f"OBSCTL_RATE_LIMITS: cannot read {part.strip()!r}; expected group=N/period "
                f"with group one of {', '.join(DEFAULT_RATE_LIMITS)} (or 'off')"
            )
        limits[group] = value
    return limits


def parse_future_skew(text: str | None) -> timedelta | None:
    """Parse `OBSCTL_MAX_FUTURE_SKEW`, how far ahead of the server's clock an event's
    timestamp may be: unset/empty = 1 day; `90s`, `30m`, `6h`, `1d`, `2w` or plain seconds;
    `0` = nothing later than the clock; `off` = no limit (returns None)."""
    if text is None or not text.strip():
        return DEFAULT_MAX_FUTURE_SKEW
    raw = text.strip().lower()
    if raw == "off":
        return None
    match = _SKEW_RE.match(raw)
    if not match:
        raise InvalidInput(f"OBSCTL_MAX_FUTURE_SKEW must look like 1d, 6h, 30m, 90s, a number of "
                           f"seconds, or 'off'; got {text!r}")
    seconds = int(match.group(1)) * _SKEW_UNITS[match.group(2)]
    if seconds > MAX_FUTURE_SKEW_DAYS * 86400:
        raise InvalidInput(f"OBSCTL_MAX_FUTURE_SKEW must be at most {MAX_FUTURE_SKEW_DAYS}d "
                           f"(or 'off' for no limit); got {text!r}")
    return timedelta(seconds=seconds)


DEFAULT_SESSION_IDLE_TIMEOUT = timedelta(minutes=30)


def parse_idle_timeout(text: str | None) -> timedelta | None:
    """Parse `OBSCTL_SESSION_IDLE_TIMEOUT`, how long an active session whose root has ended
    may receive nothing before it is completed: unset/empty = 30 minutes; `90s`, `30m`, `2h`,
    `1d` or plain seconds; `0` or `off` = never (returns None)."""
    if text is None or not text.strip():
        return DEFAULT_SESSION_IDLE_TIMEOUT
    raw = text.strip().lower()
    match = _SKEW_RE.match(raw)
    if raw != "off" and not match:
        raise InvalidInput(f"OBSCTL_SESSION_IDLE_TIMEOUT must look like 30m, 2h, 90s, a number of "
                           f"seconds, or 0/off to never complete idle sessions; got {text!r}")
    seconds = int(match.group(1)) * _SKEW_UNITS[match.group(2)] if match else 0
    if seconds > MAX_FUTURE_SKEW_DAYS * 86400:
        raise InvalidInput(f"OBSCTL_SESSION_IDLE_TIMEOUT must be at most {MAX_FUTURE_SKEW_DAYS}d; got {text!r}")
    return timedelta(seconds=seconds) if seconds else None


DEFAULT_AUTH_FAILURE_LIMIT = "10/minute"


def parse_auth_failure_limit(text: str | None) -> str | None:
    """Parse `OBSCTL_AUTH_FAILURE_LIMIT`, the failed API-key checks allowed per client address:
    unset/empty = 10/minute; `N/period` (second, minute, hour, day); `off` = no limit (None)."""
    if text is None or not text.strip():
        return DEFAULT_AUTH_FAILURE_LIMIT
    value = text.strip().lower()
    if value == "off":
        return None
    count = re.match(r"\d+", value)
    if not _LIMIT_RE.match(value) or count is None or not int(count.group()):
        raise InvalidInput(f"OBSCTL_AUTH_FAILURE_LIMIT must look like 10/minute (N per second, minute, "
                           f"hour or day) or 'off'; got {text!r}")
    return value


def parse_trusted_proxies(text: str | None) -> tuple:
    """Parse `OBSCTL_TRUSTED_PROXIES`: addresses or networks (`10.0.0.5`, `10.0.0.0/8`, `::1`),
    comma-separated, of the proxies whose X-Forwarded-For names the client. Unset: none."""
    import ipaddress

    networks = []
    for part in (text or "").split(","):
        if not part.strip():
            continue
        try:
            networks.append(ipaddress.ip_network(part.strip(), strict=False))
        except ValueError:
            raise InvalidInput(f"OBSCTL_TRUSTED_PROXIES: {part.strip()!r} is not an IP address or network "
                               f"(expected e.g. 10.0.0.5, 10.0.0.0/8 or ::1, comma-separated)") from None
    return tuple(networks)


def _int_env(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise InvalidInput(f"{name} must be at least {minimum}, got {value}")
    return value


@dataclass(frozen=True)
class Settings:
    # The SQLite file; with `db_url` set (a postgresql:// URL) the store is PostgreSQL instead.
    db_path: Path
    db_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 3000
    api_key: str | None = None
    # Signs the dashboard's session cookies (OBSCTL_SECRET_KEY); unset, a key is generated
    # once and kept in the database (services/dashboard.py).
    secret_key: str | None = None
    cors_origins: tuple[str, ...] = ("*",)
    rate_limits: dict[str, str] | None = field(default_factory=lambda: dict(DEFAULT_RATE_LIMITS))
    ratelimit_storage_uri: str = "memory://"
    max_batch: int = 1000
    max_body_bytes: int = 10 * 1024 * 1024
    webhook_allow_private: bool = False
    prices_path: Path | None = None
    max_future_skew: timedelta | None = DEFAULT_MAX_FUTURE_SKEW
    # `obsctl serve` connection handling (see obsctl/web/server.py).
    connection_limit: int = 1000
    idle_timeout: int = 30
    header_timeout: int = 10
    # Writes that may wait for the database writer at once (None: as many as `serve --threads`),
    # and how long a request waits for its write to start before a 503.
    write_queue: int | None = None
    write_timeout: int = 10
    # Remote mode: the CLI talks to the `obsctl serve` at this URL instead of opening a
    # database, sending `remote_api_key` as X-API-Key (see obsctl/cli/base.run). Set only by
    # the CLI's one precedence rule (obsctl/cli/target.py), which reads $OBSCTL_URL and
    # $OBSCTL_API_KEY, so that no key reaches a URL it did not come with.
    remote_url: str | None = None
    remote_api_key: str | None = None
    # Where people reach this obsctl's API (OBSCTL_PUBLIC_URL): alerts link to it.
    public_url: str | None = None
    # An active session whose root has ended and that receives nothing this long is completed
    # (OBSCTL_SESSION_IDLE_TIMEOUT; None: never). See obsctl/services/sessions/lifecycle.py.
    session_idle_timeout: timedelta | None = DEFAULT_SESSION_IDLE_TIMEOUT

    # `obsctl serve` also accepts OTLP/gRPC on this port (OBSCTL_OTLP_GRPC_PORT); None: off.
    otlp_grpc_port: int | None = None
    # Event streams (GET /events/stream) open at once: each holds a request thread while it
    # lasts (None: half of `serve --threads`, at least 1).
    max_streams: int | None = None
    # Hostile clients (docs/security.md): failed API-key checks per client address
    # (OBSCTL_AUTH_FAILURE_LIMIT, None: not limited), the proxies whose X-Forwarded-For names
    # the client (OBSCTL_TRUSTED_PROXIES), connections per client address, how fast a body must
    # arrive once its headers have (a first OBSCTL_BODY_TIMEOUT seconds, then
    # OBSCTL_BODY_MIN_RATE bytes a second on average), spans (or log records) per OTLP export
    # request, and the largest OTLP/gRPC message.
    auth_failure_limit: str | None = DEFAULT_AUTH_FAILURE_LIMIT
    trusted_proxies: tuple = ()
    connections_per_address: int = 100
    body_timeout: int = 10
    body_min_rate: int = 1024
    max_spans: int = 10_000
    grpc_max_message_bytes: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> Settings:
        """Build settings from `env` (default: os.environ); keyword overrides win."""
        env = os.environ if env is None else env
        origins = env.get("CORS_ORIGINS", "*")
        where = env.get("OBSCTL_DATABASE_URL") or env.get("OBSCTL_DB")
        settings = cls(
            db_path=default_db_path(env),
            port=_int_env(env, "PORT", 3000),
            api_key=env.get("SERVICE_API_KEY") or None,
            secret_key=env.get("OBSCTL_SECRET_KEY") or None,
            cors_origins=tuple(o.strip() for o in origins.split(",") if o.strip()) or ("*",),
            rate_limits=parse_rate_limits(env.get("OBSCTL_RATE_LIMITS")),
            ratelimit_storage_uri=env.get("OBSCTL_RATELIMIT_STORAGE_URI") or "memory://",
            max_batch=_int_env(env, "OBSCTL_MAX_BATCH", 1000),
            max_body_bytes=_int_env(env, "OBSCTL_MAX_BODY_BYTES", 10 * 1024 * 1024),
            webhook_allow_private=env.get("OBSCTL_WEBHOOK_ALLOW_PRIVATE", "0").strip().lower()
            in ("1", "true", "yes", "on"),
            prices_path=Path(env["OBSCTL_PRICES"]) if env.get("OBSCTL_PRICES") else None,
            max_future_skew=parse_future_skew(env.get("OBSCTL_MAX_FUTURE_SKEW")),
            connection_limit=_int_env(env, "OBSCTL_CONNECTION_LIMIT", 1000, minimum=10),
            idle_timeout=_int_env(env, "OBSCTL_IDLE_TIMEOUT", 30),
            header_timeout=_int_env(env, "OBSCTL_HEADER_TIMEOUT", 10),
            write_queue=_int_env(env, "OBSCTL_WRITE_QUEUE", 0) or None,
            write_timeout=_int_env(env, "OBSCTL_WRITE_TIMEOUT", 10),
            public_url=parse_public_url(env.get("OBSCTL_PUBLIC_URL")),
            session_idle_timeout=parse_idle_timeout(env.get("OBSCTL_SESSION_IDLE_TIMEOUT")),
            otlp_grpc_port=parse_port(env, "OBSCTL_OTLP_GRPC_PORT"),
            max_streams=_int_env(env, "OBSCTL_MAX_STREAMS", 0, minimum=0) or None,
            auth_failure_limit=parse_auth_failure_limit(env.get("OBSCTL_AUTH_FAILURE_LIMIT")),
            trusted_proxies=parse_trusted_proxies(env.get("OBSCTL_TRUSTED_PROXIES")),
            connections_per_address=_int_env(env, "OBSCTL_CONNECTIONS_PER_ADDRESS", 100),
            body_timeout=_int_env(env, "OBSCTL_BODY_TIMEOUT", 10),
            body_min_rate=_int_env(env, "OBSCTL_BODY_MIN_RATE", 1024),
            max_spans=_int_env(env, "OBSCTL_MAX_SPANS", 10_000),
            grpc_max_message_bytes=_int_env(env, "OBSCTL_GRPC_MAX_MESSAGE_BYTES", 0, minimum=0) or None,
        )
        overrides = {k: v for k, v in overrides.items() if v is not None}
        if "db_path" in overrides:
            where = overrides.pop("db_path")
        if where:
            overrides.update(database_location(where))
        return replace(settings, **overrides) if overrides else settings

    @property
    def db_display(self) -> str:
        """Where the data is, for messages: the SQLite path or the URL without its password."""
        if self.db_url:
            return display_url(self.db_url)
        return str(self.db_path)


def parse_port(env: Mapping[str, str], name: str) -> int | None:
    """A TCP port from the environment (0: any free port); None when unset or empty."""
    raw = env.get(name)
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(f"{name} must be a port number from 0 to 65535, got {raw!r}") from None
    if not 0 <= value <= 65535:
        raise InvalidInput(f"{name} must be a port number from 0 to 65535, got {value}")
    return value


def parse_public_url(value: str | None) -> str | None:
    """OBSCTL_PUBLIC_URL: an http(s):// URL with a host, without its trailing slash."""
    if not value or not value.strip():
        return None
    url = value.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInput(f"OBSCTL_PUBLIC_URL must be an http:// or https:// URL with a host; got {value!r}")
    return url


def database_location(where: str | Path) -> dict:
    """Settings fields for `--db` / OBSCTL_DATABASE_URL: a SQLite path, sqlite:///PATH, or a
    postgresql:// (postgres://) URL."""
    text = str(where) if isinstance(where, Path) else where
    scheme = text.partition("://")[0] if "://" in text else ""
    if scheme in ("postgresql", "postgres"):
        return {"db_url": text}
    if scheme == "sqlite":
        rest = text.partition("://")[2]
        return {"db_path": Path(rest[1:] if rest.startswith("/") else rest), "db_url": None}
    if scheme:
        raise InvalidInput(f"unsupported database URL scheme {scheme!r}: use a SQLite path, "
                           f"sqlite:///PATH or postgresql://USER@HOST:PORT/DB")
    return {"db_path": Path(text), "db_url": None}


def display_url(url: str) -> str:
    """The URL with its password replaced by ***, for messages, logs and `db info`."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url.split("@", 1)[-1] if "@" in url else url
    if not password:
        return url
    netloc = parts.netloc.replace(f":{password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
