"""`obsctl db copy`: a whole store from one backend to another (SQLite <-> PostgreSQL, or
the same kind), all or nothing, verified at the end.

The source is read in one snapshot, so a server may keep writing to it: the copy is the
store as it was when the copy began. The target must be empty; everything is written in one
transaction there, so a copy that fails (or is interrupted) leaves it empty, and running the
same command again is the way to resume. At the end the target's row counts and session
totals are compared with the source's inside that transaction: a mismatch rolls it back.
Rollups are not copied but recomputed from the copied rows.
"""

from __future__ import annotations

from collections.abc import Callable

from obsctl.errors import Conflict, StorageError
from obsctl.store import Store

BATCH_ROWS = 2000


def copy_store(source_store: Store, target_store: Store, *, batch_rows: int = BATCH_ROWS,
               on_start: Callable[[int], None] | None = None,
               on_rows: Callable[[str, int], None] | None = None) -> dict:
    """Copy every table of `source` into the empty `target`; returns the counts copied.

    on_start(total_rows) once the source is counted; on_rows(table, n) after each batch."""
    tables = source_store.transfer.tables()
    if not target_store.transfer.is_empty():
        raise Conflict("the target database already holds data; copy into an empty database "
                       "(a new SQLite file, or a new PostgreSQL database or schema)")
    with source_store.read_snapshot():
        counts = {table: source_store.transfer.row_count(table) for table in tables}
        totals = source_store.transfer.session_totals()
        if on_start:
            on_start(sum(counts.values()))
        with target_store.transaction():
            for table in tables:
                for rows in source_store.transfer.table_rows(table, batch_rows):
                    target_store.transfer.insert_rows(table, rows)
                    if on_rows:
                        on_rows(table, len(rows))
            target_store.transfer.finish_copy()
            copied = {table: target_store.transfer.row_count(table) for table in tables}
            copied_totals = target_store.transfer.session_totals()
            if copied != counts or copied_totals != totals:
                differing = [t for t in counts if copied[t] != counts[t]]
                raise StorageError(f"the copy does not match its source ({', '.join(differing) or 'session totals'} "
                                   f"differ); nothing was kept in the target")
    return {"tables": counts, "rows": sum(counts.values()), "session_totals": totals, "verified": True}
