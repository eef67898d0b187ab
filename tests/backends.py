"""The store backends the tests run on: SQLite always, PostgreSQL when a server answers.

Every test that uses the `store`, `db`, `settings`, `make_app`, `app`, `client`, `cli` or
`live_server` fixtures runs once per backend (the `backend` parameter). A test that names
`db_path` itself works on the SQLite file and runs on SQLite only, as does one marked
`sqlite_only` (PRAGMAs, file faults, the writer queue).

PostgreSQL: OBSCTL_TEST_PG_URL (default postgresql://postgres@127.0.0.1:5432/postgres) names a
server; each test gets its own schema in the database `obsctl_test`, dropped afterwards, so
xdist workers never collide. Without a server those tests skip with one summary line; with
CI=true (or OBSCTL_TEST_REQUIRE_PG=1) they fail instead, so CI cannot pass without PostgreSQL.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import uuid
from functools import cache

DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
TEST_DATABASE = "obsctl_test"
# OBSCTL_TEST_BACKENDS=sqlite runs the suite on SQLite alone.
BACKENDS = tuple(b.strip() for b in os.environ.get("OBSCTL_TEST_BACKENDS", "sqlite,postgresql").split(",") if b.strip())
_counter = itertools.count()


def required() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("OBSCTL_TEST_REQUIRE_PG") == "1"


def admin_url() -> str:
    return os.environ.get("OBSCTL_TEST_PG_URL", DEFAULT_ADMIN_URL)


@cache
def unavailable_reason() -> str | None:
    """None when PostgreSQL answers (the test database created if missing), else why not."""
    import psycopg

    try:
        with psycopg.connect(admin_url(), autocommit=True, connect_timeout=3) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [TEST_DATABASE]).fetchone()
            if not exists:
                # Two test runs starting at once may both try: the loser gets DuplicateDatabase,
                # or a unique violation on pg_database when the catalogues race.
                with contextlib.suppress(psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                    conn.execute(f"CREATE DATABASE {TEST_DATABASE}")
    except psycopg.Error as exc:
        return f"no PostgreSQL at {admin_url()}: {str(exc).strip().splitlines()[0]}"
    return None


def database_url() -> str:
    """The URL of the test database (the admin URL with its database replaced)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(admin_url())
    return urlunsplit(parts._replace(path=f"/{TEST_DATABASE}"))


def new_schema() -> tuple[str, str]:
    """A fresh schema name and the store URL that works in it (created by the store)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"t_{worker}_{os.getpid()}_{next(_counter)}_{uuid.uuid4().hex[:6]}"
    separator = "&" if "?" in database_url() else "?"
    return name, f"{database_url()}{separator}options=-csearch_path%3D{name}"


def drop_schema(name: str) -> None:
    import psycopg

    with psycopg.connect(database_url(), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_url() -> str:
    return os.environ.get("OBSCTL_TEST_REDIS_URL", DEFAULT_REDIS_URL)


@cache
def redis_unavailable_reason() -> str | None:
    """None when Redis answers a PING at redis_url(), else why not."""
    import redis

    try:
        redis.Redis.from_url(redis_url(), socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        return f"no Redis at {redis_url()}: {exc}"
    return None
