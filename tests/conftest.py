"""Shared fixtures: a real SQLite file per test, the real Flask app, the real CLI, and a
real `obsctl serve` process for end-to-end tests. Nothing touches the user's files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from obsctl.config import Settings
from tests import backends
from tests.live_server import _ENV_VARS, LiveServer, free_port, start_server  # noqa: E402,F401 (re-exported)
from tests.store_support import open_db


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No test sees the caller's obsctl settings or writes to the real data directory."""
    for name in _ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def pytest_configure(config):
    config.addinivalue_line("markers", "sqlite_only: runs on the SQLite backend only")
    config.addinivalue_line("markers", "postgresql_only: runs on the PostgreSQL backend only")
    config.addinivalue_line("markers", "empty_db: db_url names a database that does not exist yet")


# The files that run longest, each on one worker (`--dist loadfile`): started first, so that a
# run does not end with one of them running alone (measured with --durations, 2 cores).
SLOWEST_FILES = (
    "tests/obsctl/test_fuzz_api.py",
    "tests/obsctl/triage/test_triage_properties.py",
    "tests/obsctl/test_docs.py",
    "tests/obsctl/test_team_deployment.py",
    "tests/obsctl/test_faults.py",
    "tests/obsctl/dashboard/test_browser.py",
    "tests/obsctl/otlp/test_otlp_grpc.py",
    "tests/obsctl/test_concurrency.py",
)


def pytest_collection_modifyitems(config, items):
    """The slowest files first, the rest in collection order (a stable sort)."""
    rank = {path: i for i, path in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_generate_tests(metafunc):
    """Run each test that touches the store once per backend (tests/backends.py); one that
    uses the SQLite file itself (`db_path`, directly or through a fixture) on SQLite only."""
    if "backend" not in metafunc.fixturenames:
        return
    only_sqlite = "db_path" in metafunc.fixturenames or metafunc.definition.get_closest_marker("sqlite_only")
    if metafunc.definition.get_closest_marker("postgresql_only"):
        names = ["postgresql"]
    else:
        names = ["sqlite"] if only_sqlite else list(backends.BACKENDS)
    metafunc.parametrize("backend", names, indirect=True, scope="function")


@pytest.fixture
def backend(request) -> str:
    name = request.param
    if name == "postgresql":
        _require("PostgreSQL", backends.unavailable_reason())
    return name


def _require(service: str, reason: str | None) -> None:
    """Skip the test when `service` is unavailable (`reason`), or fail it under CI."""
    if reason:
        if backends.required():
            pytest.fail(f"{service} is required here (CI): {reason}")
        pytest.skip(f"{service} tests skipped: {reason}")


def pytest_terminal_summary(terminalreporter):
    if terminalreporter.stats.get("skipped"):
        for service, variable in (("PostgreSQL", "OBSCTL_TEST_PG_URL"), ("Redis", "OBSCTL_TEST_REDIS_URL")):
            skipped = [r for r in terminalreporter.stats.get("skipped", [])
                       if f"{service} tests skipped" in str(getattr(r, "longrepr", ""))]
            if skipped:
                terminalreporter.write_line(
                    f"{len(skipped)} {service} tests skipped: no {service} server answered "
                    f"(set {variable}; with CI=true this is a failure)")
        browser = [r for r in terminalreporter.stats.get("skipped", [])
                   if "Chromium tests skipped" in str(getattr(r, "longrepr", ""))]
        if browser:
            terminalreporter.write_line(
                f"{len(browser)} browser tests skipped: no Chromium (apt-get install chromium, or set "
                "CHROMIUM_PATH; with CI=true this is a failure)")


@pytest.fixture
def pg_url():
    """A fresh PostgreSQL schema's URL, for tests about PostgreSQL itself (skipped without a
    server; a failure under CI)."""
    _require("PostgreSQL", backends.unavailable_reason())
    name, url = backends.new_schema()
    yield url
    backends.drop_schema(name)


@pytest.fixture
def redis_url():
    """A Redis database emptied for the test (skipped without a server; a failure under CI)."""
    _require("Redis", backends.redis_unavailable_reason())
    import redis

    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    number = 1 + (int(worker[2:]) if worker[2:].isdigit() else 0) % 15
    url = backends.redis_url().rsplit("/", 1)[0] + f"/{number}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "obsctl.db"


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory) -> Path:
    """A SQLite database migrated once per worker; each test gets a copy (migrating a new
    file through every migration costs more than most tests)."""
    path = tmp_path_factory.mktemp("template") / "obsctl.db"
    open_db(path).close()
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{path}{suffix}").exists(), "the template must be checkpointed"
    return path


@pytest.fixture(scope="session", autouse=True)
def _leased_schemas():
    yield
    if "postgresql" in backends.BACKENDS and not backends.unavailable_reason():
        backends.drop_leased()


@pytest.fixture
def db_url(backend, tmp_path, request):
    """Where the test's data is: a SQLite file or a PostgreSQL schema's URL, migrated and
    empty; a test marked `empty_db` gets a database that does not exist yet."""
    empty = request.node.get_closest_marker("empty_db") is not None
    if backend == "sqlite":
        path = tmp_path / "obsctl.db"
        if not empty:
            shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
        yield str(path)
        return
    if empty:
        name, url = backends.new_schema()
        yield url
        backends.drop_schema(name)
        return
    name, url = backends.lease_schema()
    yield url
    backends.release_schema(name)


@pytest.fixture
def settings(db_url) -> Settings:
    return Settings.from_env({}, db_path=db_url)


@pytest.fixture
def db(db_url, backend):
    """A store over a fresh database, usable as its handle too (`db.conn.execute(sql, params)`
    with ? placeholders on both backends)."""
    if backend == "sqlite":
        handle = open_db(db_url)
    else:
        from tests.store_support import open_pg

        handle = open_pg(db_url)
    yield handle
    handle.close()


@pytest.fixture
def store(db):
    """The store services receive (the same one as `db`)."""
    return db


@pytest.fixture
def make_app(db_url):
    """Build an app with settings from an env mapping (e.g. {"SERVICE_API_KEY": "k"})."""
    from obsctl.web.app import create_app

    apps = []

    def factory(env: dict | None = None, **overrides):
        app = create_app(Settings.from_env(env or {}, db_path=db_url, **overrides))
        app.config["TESTING"] = True
        apps.append(app)
        return app

    yield factory
    for app in apps:
        app.extensions["obsctl"].store.close()


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def cli(db_url):
    """Run obsctl in-process: cli("sessions", "list", "--json") -> click Result."""
    from obsctl.cli.main import app as cli_app

    runner = CliRunner()

    def invoke(*args: str, input: str | bytes | None = None, env: dict | None = None):
        return runner.invoke(cli_app, ["--db", str(db_url), *args], input=input, env=env,
                             catch_exceptions=False)

    return invoke


@pytest.fixture
def terminal(monkeypatch):
    """CLI output as on a terminal (rich tables, colours, panels): CliRunner captures stdout,
    so it is never a tty; `obsctl.cli.output.stdout_is_tty` is the one place output asks."""
    from obsctl.cli import output

    monkeypatch.setattr(output, "stdout_is_tty", lambda: True)


@pytest.fixture
def live_server(db_url, tmp_path):
    """A real `obsctl serve` on 127.0.0.1 (dev mode, limits as configured by `env`)."""
    servers = []

    def factory(env: dict | None = None, threads: int = 4, args: tuple[str, ...] = ()) -> LiveServer:
        server = start_server(db_url, tmp_path, env, threads, args=args)
        servers.append(server)
        return server

    yield factory
    for server in servers:
        server.stop()


def event(session_id: str = "s1", event_type: str = "llm_call", **fields) -> dict:
    """A minimal event dict for tests."""
    return {"session_id": session_id, "event_type": event_type, **fields}


# Exact test prices (USD per million tokens), so hand-computed costs do not depend on the
# genai-prices data shipped with the installed version.
TEST_PRICES = {"gpt-4o": {"input_per_mtok": 1, "output_per_mtok": 2},
               "big-model": {"input_per_mtok": 10, "output_per_mtok": 30}}


def use_prices(store, directory: Path, prices: dict | None = None) -> Path:
    """Make `store` cost what it ingests with an OBSCTL_PRICES file of `prices` (TEST_PRICES
    by default), written in `directory`; returns the file's path."""
    import json

    path = directory / "prices.json"
    path.write_text(json.dumps(TEST_PRICES if prices is None else prices))
    store.prices_path, store.pricer = path, None
    return path
