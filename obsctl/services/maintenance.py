"""Retention and database tools: prune old sessions, describe the database, back it up."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value, loads_column
from obsctl.services.sessions.lifecycle import complete_idle_sessions
from obsctl.store import Store
from obsctl.timeutil import MAX_AGE, iso_minus, normalize_ts, now_iso, parse_age  # noqa: F401 (re-exported)

PRUNE_BATCH_SESSIONS = 500
# Events deleted per transaction at most (SQLite; about half a second of its write lock): a
# session with more goes over several transactions.
PRUNE_BATCH_EVENTS = 20_000
# A pause between two transactions of a prune, so a writer waiting for SQLite's lock (which
# polls while it waits) gets it before the next batch does.
PRUNE_PAUSE_S = 0.05


def prune(store: Store, older_than: str, *, dry_run: bool = False,
          on_progress=lambda sessions, events: None, cutoff: str | None = None,
          deadline: float | None = None, idle_timeout: timedelta | None = None) -> dict:
    """Delete sessions (with their events) whose last activity is older than `older_than`.

    First, unless `dry_run`, sessions idle for `idle_timeout` are completed (see
    services/sessions/lifecycle.py), as every scheduled run does.

    Works in transactions of a few hundred sessions and at most PRUNE_BATCH_EVENTS events (on
    SQLite), so a running server keeps ingesting, even while one huge session goes.

    `cutoff` continues an earlier prune with that earlier cutoff (it must be at least
    `older_than` ago). With `deadline` (a `time.monotonic()` value) it stops after the first
    batch that ends past it: the result then has `"complete": False`, and the same call with
    the returned cutoff goes on. The HTTP API prunes this way, so no request runs for long.
    """
    age = parse_age(older_than)
    if not dry_run:
        complete_idle_sessions(store, idle_timeout)
    latest = iso_minus(age)
    cutoff = latest if cutoff is None else _checked_cutoff(cutoff, latest, older_than)
    sessions, events = store.maintenance.count_prunable(cutoff)
    result = {"older_than": older_than, "cutoff": cutoff, "dry_run": dry_run,
              "sessions": sessions, "events": events}
    if dry_run or not sessions:
        return result
    deleted_sessions = deleted_events = 0
    while True:
        s, e = store.maintenance.prune_batch(cutoff, PRUNE_BATCH_SESSIONS, PRUNE_BATCH_EVENTS)
        if not s and not e:
            break
        deleted_sessions += s
        deleted_events += e
        on_progress(deleted_sessions, deleted_events)
        if deadline is not None and time.monotonic() >= deadline:
            result.update(sessions=deleted_sessions, events=deleted_events, complete=False)
            return result
        time.sleep(PRUNE_PAUSE_S)
    result.update(sessions=deleted_sessions, events=deleted_events)
    return result


def _checked_cutoff(cutoff: object, latest: str, older_than: str) -> str:
    try:
        if type(cutoff) is not str:
            raise ValueError
        cutoff = normalize_ts(cutoff)
    except ValueError:
        raise InvalidInput(f"cutoff must be an ISO 8601 timestamp; got {describe_value(cutoff)}") from None
    if cutoff > latest:
        raise InvalidInput(f"cutoff {cutoff} is less than {older_than} ago; it must be at or before {latest}")
    return cutoff


def check_integrity(store: Store) -> dict:
    """SQLite's quick check of the whole file (every page of every table and index, without
    cross-checking indexes against tables): `{"quick_check": "ok" | "damaged", "problems":
    [...], "checked_at": ...}`. It reads the whole file, so it takes a while on large ones."""
    checked_at = now_iso()
    problems = store.maintenance.quick_check()
    return {"quick_check": "damaged" if problems else "ok", "problems": problems,
            "checked_at": checked_at}


def skipped_check() -> dict:
    return {"quick_check": "skipped", "problems": [], "checked_at": None}


def damaged_message(path, check: dict) -> str:
    problems = check["problems"]
    noun = "problem" if len(problems) == 1 else "problems"
    return (f"the database {path} is damaged: SQLite's quick_check found {len(problems)}"
            f"{'+' if len(problems) >= 20 else ''} {noun}, the first: {problems[0]}; restore it from "
            f"a backup (obsctl db backup makes them), or pass --skip-check to use it anyway")


def db_info(store: Store, path: Path | str, *, check: bool = True) -> dict:
    """Path, size on disk (with the WAL), schema version, row counts, SQLite details and,
    unless `check` is false, the result of the integrity check. On PostgreSQL `path` is the
    URL to show (without its password), and the size is the database's."""
    integrity = check_integrity(store) if check else skipped_check()
    # Which price table the stored costs came from (null before any cost was stored).
    prices = None if integrity["quick_check"] == "damaged" else store.costs.price_table()
    if store.backend != "sqlite":
        engine = store.maintenance.pragmas(None)
        return {
            "backend": store.backend,
            "url": str(path),
            "size_bytes": engine.pop("database_size_bytes"),
            "schema_version": store.schema_version(),
            "tables": store.maintenance.table_counts(damaged=integrity["quick_check"] == "damaged"),
            **engine,
            "integrity": integrity,
            "prices": prices,
        }
    size = sum(os.path.getsize(p) for p in (str(path), f"{path}-wal") if os.path.exists(p))
    return {
        "backend": "sqlite",
        "path": str(Path(path).resolve()),
        "size_bytes": size,
        "schema_version": store.schema_version(),
        "tables": store.maintenance.table_counts(damaged=integrity["quick_check"] == "damaged"),
        **store.maintenance.pragmas(Path(path)),
        "integrity": integrity,
        "prices": prices,
    }


def reprice(store: Store) -> dict:
    """Cost every stored event again with the store's price table (genai-prices and
    `OBSCTL_PRICES`), then every session's cost_usd and unpriced_calls and the analytics rollup
    from its events, in one transaction; the table's version is recorded. One UPDATE per model (the prices are looked
    up once per model, the arithmetic runs in SQL), so memory stays small at any size.

    Spans stored before cache and reasoning tokens were get them first, from their kept span
    attributes. `{"prices", "models", "unpriced_models", "events", "sessions",
    "cache_counts_recounted"}`: the version used, how many models were priced, the models
    without a known price, the rows recosted, and the events whose cache and reasoning counts
    were read from their attributes."""
    from obsctl.services.pricing import pricer_of

    pricer = pricer_of(store)
    unpriced: list[str] = []
    events = 0
    with store.transaction():
        recounted = _recount_usage_parts(store)
        models = store.costs.stored_models()
        for model in models:
            price = pricer.price(model)
            if price is None:
                unpriced.append(model)
            events += store.costs.set_model_costs(model, price.rates() if price else None)
        sessions = store.costs.recount_session_costs()
        store.costs.recount_rollup_costs()
        store.costs.mark_repriced(pricer.version)
    return {"prices": pricer.version, "models": len(models) - len(unpriced), "unpriced_models": unpriced,
            "events": events, "sessions": sessions, "cache_counts_recounted": recounted}


# Events read at a time by _recount_usage_parts: memory stays bounded at any size.
_RECOUNT_PAGE = 1000


def _recount_usage_parts(store: Store) -> int:
    """Spans stored before cache and reasoning tokens were (m031) get them from the span
    attributes kept in their metadata, as ingest reads them today; returns how many."""
    from obsctl.services.otlp.token_counts import stored_usage_parts

    after, recounted = 0, 0
    while rows := store.costs.unsplit_usage(after, _RECOUNT_PAGE):
        found = []
        for row_id, event_id, tokens_in, tokens_out, metadata in rows:
            after = row_id
            attributes = (loads_column(metadata) or {}).get("attributes")
            if type(attributes) is dict:
                parts = stored_usage_parts(attributes, tokens_in, tokens_out)
                if parts is not None:
                    found.append((*parts, event_id))
        store.costs.set_usage_parts(found)
        recounted += len(found)
    return recounted


def backup(store: Store, dest: str | Path, *, force: bool = False) -> dict:
    """Write a consistent copy of the database to `dest` while others keep writing."""
    dest = Path(dest)
    if store.backend != "sqlite":
        store.maintenance.backup_to(dest)  # says which tool backs this backend up; touches no file
    if dest.exists():
        if not force:
            raise InvalidInput(f"{dest} already exists; choose another path or pass --force")
        if dest.is_dir():
            raise InvalidInput(f"{dest} is a directory; give a file path")
        dest.unlink()
    if not dest.parent.exists():
        raise InvalidInput(f"directory {dest.parent} does not exist")
    store.maintenance.backup_to(dest)
    return {"path": str(dest.resolve()), "size_bytes": dest.stat().st_size}
