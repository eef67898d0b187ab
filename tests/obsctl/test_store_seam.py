"""The store seam: what may import the store, and what leaves it.

Services receive a store and never a connection; the CLI and the web layer reach the store only
through obsctl.services.storage; database errors leave the store as obsctl errors.
"""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

from obsctl.errors import InvalidInput, NotFound, StorageDamaged, StorageError, StorageFull
from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import get_session, list_sessions
from obsctl.services.storage import open_store
from obsctl.store import _sqlite_path
from tests.conftest import event

PACKAGE = Path(__file__).resolve().parents[2] / "obsctl"
DRIVERS = ("sqlite3", "sqlite_utils", "psycopg", "psycopg_pool")
# The store's own modules: only the store package itself may name them.
STORE_INTERNALS = ("obsctl.store.",)


def imported_modules(source: str) -> list[str]:
    """Every module an import statement of `source` names (`from a import b` gives a and a.b)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def seam_violations(layer: str, source: str) -> list[str]:
    """The imports of a module of `layer` ("services", "cli" or "web") that cross the seam."""
    bad = []
    for name in imported_modules(source):
        root = name.split(".")[0]
        if root in DRIVERS:
            bad.append(f"{name} (a database driver)")
        elif layer == "services" and name.startswith(STORE_INTERNALS) and name not in (
                "obsctl.store.Store", "obsctl.store.open_store"):
            bad.append(f"{name} (inside the store; services use obsctl.store's Store and open_store)")
        elif layer != "services" and (name == "obsctl.store" or name.startswith(STORE_INTERNALS)):
            bad.append(f"{name} (the {layer} layer opens stores through obsctl.services.storage)")
    return bad


def test_no_layer_above_the_store_imports_a_driver_or_the_store_internals():
    found = {}
    for layer in ("services", "cli", "web"):
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            bad = seam_violations(layer, path.read_text())
            if bad:
                found[str(path.relative_to(PACKAGE.parent))] = bad
    assert found == {}


@pytest.mark.parametrize(("layer", "source"), [
    ("services", "import sqlite3"),
    ("services", "import sqlite_utils"),
    ("services", "from psycopg import sql"),
    ("services", "from obsctl.store.sqlite.db import write_transaction"),
    ("services", "from obsctl.store.sqlite import sessions as store"),
    ("services", "def f():\n    from obsctl.store.sqlite.sqlite_errors import is_full\n"),
    ("cli", "from obsctl.store import open_store"),
    ("web", "import obsctl.store.sqlite.db"),
])
def test_the_seam_check_catches_a_crossing(layer, source):
    assert seam_violations(layer, source)


@pytest.mark.parametrize(("layer", "source"), [
    ("services", "from obsctl.store import Store, open_store"),
    ("cli", "from obsctl.services.storage import open_store"),
    ("web", "from obsctl.services import ingest"),
])
def test_the_seam_check_allows_the_way_in(layer, source):
    assert seam_violations(layer, source) == []


# Opening ---------------------------------------------------------------------------------------

def test_a_store_opened_from_a_url_sees_what_one_opened_from_the_path_stored(db_path):
    writer = open_store(db_path)
    try:
        ingest_events(writer, [event("s1", event_id="e1")])
    finally:
        writer.close()
    reader = open_store(f"sqlite:///{db_path}", mode="read")
    try:
        assert reader.readonly
        assert list_sessions(reader)["total"] == 1
    finally:
        reader.close()


@pytest.mark.parametrize(("url", "path"), [
    ("sqlite:////var/obsctl.db", "/var/obsctl.db"),
    ("sqlite:///data/obsctl.db", "data/obsctl.db"),
    ("/var/obsctl.db", "/var/obsctl.db"),
])
def test_sqlite_urls(url, path):
    assert _sqlite_path(url) == Path(path)


def test_a_url_of_another_database_is_refused_by_name():
    with pytest.raises(InvalidInput, match="unsupported database URL scheme 'mysql'"):
        open_store("mysql://host/db")


def test_a_missing_database_is_not_found_for_reading_and_existing(db_path):
    for mode in ("read", "existing"):
        with pytest.raises(NotFound, match="no database at"):
            open_store(db_path, mode=mode)
    assert not db_path.exists()


# Units of work -----------------------------------------------------------------------------

def test_a_unit_of_work_that_raises_stores_nothing(store):
    with pytest.raises(RuntimeError), store.transaction():
        ingest_events(store, [event("s1", event_id="e1")])
        raise RuntimeError("undo")
    assert store.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0


def test_a_nested_unit_of_work_is_undone_alone(store):
    with store.transaction():
        ingest_events(store, [event("s1", event_id="e1")])
        with pytest.raises(RuntimeError), store.transaction():
            ingest_events(store, [event("s2", event_id="e2")])
            raise RuntimeError("undo the inner one")
    assert [s["session_id"] for s in list_sessions(store)["sessions"]] == ["s1"]


# Errors leave the store as obsctl errors --------------------------------------------------------

@pytest.mark.sqlite_only  # a full disk made with SQLite's max_page_count
def test_a_full_disk_is_storage_full_not_a_sqlite_error(store):
    pages = store.execute("PRAGMA page_count").fetchone()[0]
    store.execute(f"PRAGMA max_page_count = {pages + 2}")
    big = [event("s1", event_id=f"e{i}", input_data={"text": "x" * 2000}) for i in range(50)]
    with pytest.raises(StorageFull, match="the disk holding the database is full"):
        ingest_events(store, big)
    assert store.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0


def test_a_damaged_file_is_storage_damaged_from_a_repository(db_path, tmp_path):
    store = open_store(db_path)
    try:
        ingest_events(store, [event(f"s{i}", event_id=f"e{i}", input_data={"p": "y" * 500})
                              for i in range(400)])
    finally:
        store.close()
    handle = sqlite3.connect(db_path)
    handle.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size, pages = (handle.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_size", "page_count"))
    handle.close()
    with open(db_path, "r+b") as f:
        for page in range(pages // 2, pages):
            f.seek(page * page_size)
            f.write(b"\xa5" * page_size)
    damaged = open_store(db_path, mode="read")
    try:
        with pytest.raises(StorageDamaged, match="the database file is damaged"):
            damaged.maintenance.table_counts()
    finally:
        damaged.close()


def test_any_other_database_error_is_a_storage_error(store, backend):
    store.execute("DROP TABLE sessions CASCADE" if backend == "postgresql" else "DROP TABLE sessions")
    missing = 'relation "sessions" does not exist' if backend == "postgresql" else "no such table: sessions"
    with pytest.raises(StorageError, match=f"database error: {missing}"):
        get_session(store, "s1")


def test_an_error_while_a_repository_generator_is_read_is_translated(store):
    from obsctl.services.sessions.export import export_session

    ingest_events(store, [event("s1", event_id="e1")])
    stream = export_session(store, "s1", "json")
    store.execute("DROP TABLE events")
    with pytest.raises(StorageError):
        b"".join(stream.chunks)
