"""The store backends the tests run on: SQLite always, PostgreSQL when a server answers.

Every test that uses the `store`, `db`, `settings`, `make_app`, `app`, `client`, `cli` or
`live_server` fixtures runs once per backend (the `backend` parameter). A test that names
`db_path` itself works on the SQLite file and runs on SQLite only, as does one marked
`sqlite_only` (PRAGMAs, file faults, the writer queue).

PostgreSQL: OBSCTL_TEST_PG_URL (default postgresql://postgres@127.0.0.1:5432/postgres) names a
server; each test gets its own schema in the database `obsctl_test`, so xdist workers never
collide. Building the schema is most of a short test's time (about 0.35 s of DDL), so a worker
keeps the schemas its tests used: `lease_schema` hands out one already migrated and emptied,
`release_schema` empties it again (rows deleted, identities restarted, the week partitions
ingest added dropped) or, when the test changed its shape (`_shape` differs), drops it.
`new_schema` is the old way, for a test about a schema that does not exist yet (`pg_url`). Without a server those tests skip with one summary line; with
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


# Per worker process: migrated schemas free for the next test, and what a clean one holds
# (its tables, sequences, week partitions, the rows the migrations insert, its shape).
_free: list[str] = []
_template: dict = {}

# Catalogue queries go through indexes (by name, by relation id): a test database's catalogue
# holds many dead rows from the schemas earlier runs created, and a scan reads them all.
_SHAPE_SQL = """
SELECT (SELECT count(*) FROM _obsctl_migrations),
       (SELECT count(*) FROM pg_class c WHERE c.relname = ANY(%(names)s) AND c.relnamespace = %(ns)s),
       (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = ANY(
            SELECT c.oid FROM pg_class c WHERE c.relname = ANY(%(names)s) AND c.relnamespace = %(ns)s)
          AND a.attnum > 0 AND NOT a.attisdropped)
"""

# Drop the week partitions a test's ingest added, empty every table (partitions through their
# parent), restart every sequence; one round trip, triggers off (the rollups they keep are
# emptied too, then reseeded).
_RESET_SQL = """
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent = 'events'::regclass AND c.relname <> ALL({partitions}::text[]) LOOP
    EXECUTE format('DROP TABLE %I', r.relname);
  END LOOP;
  FOR r IN SELECT unnest({tables}::text[]) AS name LOOP
    EXECUTE format('DELETE FROM %I', r.name);
  END LOOP;
  FOR r IN SELECT unnest({sequences}::text[]) AS name LOOP
    EXECUTE format('ALTER SEQUENCE %I RESTART', r.name);
  END LOOP;
END $$
"""


def _schema_url(name: str) -> str:
    separator = "&" if "?" in database_url() else "?"
    return f"{database_url()}{separator}options=-csearch_path%3D{name}"


def _connect_in(name: str):
    import psycopg

    conn = psycopg.connect(database_url(), autocommit=True)
    conn.execute(f'SET search_path = "{name}"')
    conn.execute("SET lock_timeout = '5s'")
    return conn


def _shape(conn) -> tuple:
    ns = conn.execute("SELECT oid FROM pg_namespace WHERE nspname = current_schema()").fetchone()[0]
    return conn.execute(_SHAPE_SQL, {"names": _template["relations"], "ns": ns}).fetchone()


def lease_schema() -> tuple[str, str]:
    """A migrated, empty schema of this worker's and its store URL (see the module text)."""
    if _free:
        name = _free.pop()
        return name, _schema_url(name)
    name, url = new_schema()
    from obsctl.store.postgres.pg_store import PgStore

    PgStore.open(url, "create").close()
    if not _template:
        with _connect_in(name) as conn:
            _remember_template(conn)
    return name, url


def _remember_template(conn) -> None:
    def names(kinds: str, partitions: bool = False) -> list[str]:
        return [r[0] for r in conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = "
            "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
            "AND relkind = ANY(%s) AND relispartition = %s ORDER BY relname", [list(kinds), partitions])]

    tables = [t for t in names("rp") if t != MIGRATIONS]
    _template.update(relations=names("rpivS"), tables=tables, sequences=names("S"),
                     partitions=names("rp", partitions=True))
    _template["seed"] = {t: rows for t in tables if (rows := conn.execute(f"SELECT * FROM {t}").fetchall())}
    _template["shape"] = _shape(conn)


MIGRATIONS = "_obsctl_migrations"


def release_schema(name: str) -> None:
    """Empty the schema for the next test, or drop it when the test changed its shape or it
    cannot be emptied (a lock still held by a stray connection)."""
    import psycopg
    from psycopg import sql

    try:
        with _connect_in(name) as conn:
            if _shape(conn) != _template["shape"]:
                raise LookupError(name)
            with conn.transaction():
                conn.execute("SET LOCAL session_replication_role = replica")
                conn.execute(sql.SQL(_RESET_SQL).format(**{
                    key: sql.Literal(_template[key]) for key in ("partitions", "tables", "sequences")}))
                for table, rows in _template["seed"].items():
                    marks = ", ".join(["%s"] * len(rows[0]))
                    with conn.cursor() as cur:
                        cur.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    except (psycopg.Error, LookupError):
        drop_schema(name)
        return
    _free.append(name)


def drop_leased() -> None:
    """Drop this worker's free schemas (at the end of its session)."""
    while _free:
        with contextlib.suppress(Exception):
            drop_schema(_free.pop())
