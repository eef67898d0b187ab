"""Full-text search over events on SQLite: an FTS5 index (porter stemming over unicode61
words) of input_data, output_data, tool_call and decision_trace (migration m022).

Newest first is the index's own order. Each indexed event has a search key in
`event_search_keys`: its timestamp in milliseconds times 16384, plus its place among the
events of the same millisecond (in the order they were stored). The key is the FTS5 rowid,
so that the index hands out matches newest first and stops at the page (`ORDER BY rowid
DESC LIMIT`), and a window (`since`, `until`) is a rowid range inside the index: neither
reads every match. The text itself stays in `events` alone (external content, read through
the view `event_search_content`).

New events are indexed after their ingest transaction commits (migration m036), a batch at a
time (`index_pending`): by the server's indexer in the background, at the end of a CLI ingest,
and by any search before it answers, so a search sees every stored event while ingest does
not pay for the index. `search_progress.indexed_through` says how far the index is complete;
it moves with the batch's index rows, in one transaction. Triggers on `events` keep the index
in step where rows change or go: OTLP filling an event's contents later (a changed event is
indexed again, or early when it is past the position: the batch then skips it), session
delete, prune.

Filters on the session (agent) or the type are checked on each match, newest first, until the
page is full. One session's events are read through its own index, each looked up in the
search index by key. By rank (bm25) every match is scored: a common word costs its number of
matches.

Bounds (obsctl/store/search_text.py): the index holds the first INDEXED_CHARS characters of
each field (migration m025 cut the events indexed whole before it); a snippet is FTS5's
`snippet()` over one window of the field, in an in-memory FTS5 table of the page's windows,
never over the whole field (its cost grows with the square of the matches it is given); a
progress handler stops the search's statements at its time budget.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing

from obsctl.errors import InvalidInput
from obsctl.models.sessions import EventSelection
from obsctl.store.search_text import (
    COLUMNS,
    INDEXED_CHARS,
    Window,
    budget_exceeded,
    first_matches,
)

SLOTS_PER_MS = 16384  # keys per millisecond; keeps year 1 to 9999 within 64-bit integers
# An event is indexed (has a key) when it has one of them; removing an event's entry looks
# its key up, so it does nothing for an event never indexed.
_HAS_TEXT = " OR ".join(f"{{row}}.{c} IS NOT NULL" for c in COLUMNS)
_NAMES = ", ".join(COLUMNS)


def _values(row: str, cap: int | None) -> str:
    """SQL: the indexed text of the four columns of `row` (NEW, OLD, e), named as they are:
    cut at `cap` characters (None: whole, as before m025)."""
    return ", ".join(f"{row}.{c}" if cap is None else f"substr({row}.{c}, 1, {cap}) AS {c}" for c in COLUMNS)


def key_base(ts: str) -> str:
    """SQL: the first key of the millisecond of the stored timestamp `ts` (SQL text)."""
    return (f"((CAST(strftime('%s', {ts}) AS INTEGER) * 1000 + CAST(substr({ts}, 21, 3) AS INTEGER)) "
            f"* {SLOTS_PER_MS})")


# The next free key of the event's millisecond; past its last slot (more than 16384 events
# stored in one millisecond), after every key (still unique; only its order is off).
_NEXT_KEY = f"""(SELECT CASE WHEN k < base + {SLOTS_PER_MS} THEN k ELSE (SELECT MAX(key) + 1 FROM event_search_keys) END
                 FROM (SELECT base, COALESCE((SELECT MAX(key) + 1 FROM event_search_keys
                                              WHERE key >= base AND key < base + {SLOTS_PER_MS}), base) AS k
                       FROM (SELECT {key_base('NEW.timestamp')} AS base)))"""

CREATE_TABLES = f"""
CREATE TABLE event_search_keys (
    key INTEGER PRIMARY KEY,
    event_rowid INTEGER NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE events_fts USING fts5(
    {_NAMES}, content='event_search_content', content_rowid='key', tokenize='porter unicode61');
"""


def view_and_triggers(cap: int | None) -> list[str]:
    """SQL statements: the index's content (the view FTS5 reads an event's indexed text from)
    and the triggers that keep the index in step with `events`, the text cut at `cap`
    characters (m022 indexed whole fields: None). The delete trigger removes what the insert
    trigger added, so both cut the same."""
    add = f"""
    INSERT INTO event_search_keys (key, event_rowid) SELECT {_NEXT_KEY}, NEW.id WHERE {_HAS_TEXT.format(row='NEW')};
    INSERT INTO events_fts (rowid, {_NAMES})
    SELECT key, {_values('NEW', cap)} FROM event_search_keys WHERE event_rowid = NEW.id;"""
    remove = f"""
    INSERT INTO events_fts (events_fts, rowid, {_NAMES})
    SELECT 'delete', key, {_values('OLD', cap)} FROM event_search_keys WHERE event_rowid = OLD.id;
    DELETE FROM event_search_keys WHERE event_rowid = OLD.id;"""
    return [
        f"""CREATE VIEW event_search_content AS SELECT k.key, {_values('e', cap)}
            FROM event_search_keys k JOIN events e ON e.id = k.event_rowid""",
        f"CREATE TRIGGER events_fts_insert AFTER INSERT ON events WHEN {_HAS_TEXT.format(row='NEW')} BEGIN {add} END",
        f"CREATE TRIGGER events_fts_delete AFTER DELETE ON events WHEN {_HAS_TEXT.format(row='OLD')} BEGIN {remove} END",
        f"CREATE TRIGGER events_fts_update AFTER UPDATE OF {_NAMES}, timestamp ON events BEGIN {remove}{add} END",
    ]


DROP_VIEW_AND_TRIGGERS = ["DROP TRIGGER events_fts_insert", "DROP TRIGGER events_fts_delete",
                          "DROP TRIGGER events_fts_update", "DROP VIEW event_search_content"]

BACKFILL_BATCH = 20_000
# Events indexed per transaction after ingest (index_pending): about 0.1 s of work.
INDEX_BATCH = 5_000
# One key, as the insert trigger before m036 drew it: the next free slot of the event's
# millisecond (named parameters: the event's timestamp and rowid).
_ADD_KEY = ("INSERT INTO event_search_keys (key, event_rowid) SELECT "
            + _NEXT_KEY.replace("NEW.timestamp", ":timestamp") + ", :id")
# Markers of the matched words in snippets, replaced by the caller's (services/search.py).
MARK_START, MARK_END = "\x02", "\x03"
ELLIPSIS = "…"
SNIPPET_TOKENS = 16
# SQLite virtual machine steps between two looks at the clock (a look costs about 0.1 µs).
PROGRESS_STEPS = 1000

_COLUMNS = "e.event_id, e.session_id, s.agent_name, e.event_type, e.timestamp, k.key"
_FIELDS = ("event_id", "session_id", "agent_name", "event_type", "timestamp", "key")


def index_pending(db, limit: int = INDEX_BATCH) -> int:
    """Index up to `limit` of the events stored after the index's position, in the caller's
    write transaction, and move the position past them; returns how many events it moved over
    (0: the index is complete). Events without text move it too; an event already indexed (its
    contents filled in since, by the update trigger) is not indexed again."""
    conn = getattr(db, "conn", db)
    position = conn.execute("SELECT indexed_through FROM search_progress").fetchone()[0]
    rows = conn.execute(
        f"SELECT e.id, e.timestamp, ({_HAS_TEXT.format(row='e')}) AND NOT EXISTS "
        f"(SELECT 1 FROM event_search_keys k WHERE k.event_rowid = e.id) "
        f"FROM events e WHERE e.id > ? ORDER BY e.id LIMIT ?", [position, limit]).fetchall()
    if not rows:
        return 0
    wanted = [{"id": row_id, "timestamp": ts} for row_id, ts, index in rows if index]
    if wanted:
        conn.executemany(_ADD_KEY, wanted)
        conn.execute(f"INSERT INTO events_fts (rowid, {_NAMES}) SELECT key, {_NAMES} FROM event_search_content "
                     f"WHERE key IN (SELECT key FROM event_search_keys WHERE event_rowid IN "
                     f"(SELECT value FROM json_each(?)))", [json.dumps([w["id"] for w in wanted])])
    conn.execute("UPDATE search_progress SET indexed_through = ?", [rows[-1][0]])
    return len(rows)


def pending(db) -> int:
    """How many stored events are past the index's position (its next batches' work)."""
    conn = getattr(db, "conn", db)
    return conn.execute("SELECT COUNT(*) FROM events WHERE id > (SELECT indexed_through FROM search_progress)"
                        ).fetchone()[0]


def index_existing(conn: sqlite3.Connection) -> int:
    """Index the events stored before the index existed: their keys in one statement (the
    places within a millisecond need them all), then the index in batches of keys, merged
    into one segment at the end; returns how many events were indexed."""
    conn.execute(f"""
        INSERT INTO event_search_keys (key, event_rowid)
        SELECT {key_base('timestamp')} + ROW_NUMBER() OVER (PARTITION BY timestamp ORDER BY id) - 1, id
        FROM events WHERE {_HAS_TEXT.format(row='events')}""")
    last, indexed = None, 0
    while True:
        after = "" if last is None else "WHERE key > ?"
        high = conn.execute(f"SELECT MAX(key) FROM (SELECT key FROM event_search_keys {after} ORDER BY key LIMIT ?)",
                            [*([] if last is None else [last]), BACKFILL_BATCH]).fetchone()[0]
        if high is None:
            break
        indexed += conn.execute(
            f"INSERT INTO events_fts (rowid, {_NAMES}) SELECT key, {_NAMES} FROM event_search_content "
            f"WHERE key <= ? {'' if last is None else 'AND key > ?'} ORDER BY key",
            [high, *([] if last is None else [last])]).rowcount
        last = high
    conn.execute("INSERT INTO events_fts (events_fts) VALUES ('optimize')")
    return indexed


def cap_indexed_text(conn: sqlite3.Connection) -> int:
    """Migration m025: index only the first INDEXED_CHARS characters of each field. The
    events with a longer field leave the index with the whole text they were added with (an
    FTS5 delete must name the very text indexed) and come back cut; the view and triggers are
    replaced by cutting ones. Returns how many events were indexed again."""
    longer = " OR ".join(f"length(e.{c}) > {INDEXED_CHARS}" for c in COLUMNS)
    keys = [r[0] for r in conn.execute(
        f"SELECT k.key FROM event_search_keys k JOIN events e ON e.id = k.event_rowid WHERE {longer}")]
    chunks = [keys[i:i + 500] for i in range(0, len(keys), 500)]
    for chunk in chunks:
        conn.execute(f"INSERT INTO events_fts (events_fts, rowid, {_NAMES}) SELECT 'delete', k.key, {_values('e', None)} "
                     f"FROM event_search_keys k JOIN events e ON e.id = k.event_rowid "
                     f"WHERE k.key IN ({', '.join('?' * len(chunk))})", chunk)
    for statement in (*DROP_VIEW_AND_TRIGGERS, *view_and_triggers(INDEXED_CHARS)):
        conn.execute(statement)
    for chunk in chunks:
        conn.execute(f"INSERT INTO events_fts (rowid, {_NAMES}) SELECT key, {_NAMES} FROM event_search_content "
                     f"WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
    return len(keys)


def match_expression(terms: list[tuple[str, str]], join: str = " AND ") -> str:
    """The FTS5 query for the parsed terms (services/search.py): every term a quoted string,
    so no word is read as an operator; a prefix term ends with `*`. Terms are ANDed (`join`
    " OR ": any of them, as snippets look for)."""
    parts = []
    for kind, text in terms:
        quoted = '"' + text.replace('"', '""') + '"'
        parts.append(quoted + " *" if kind == "prefix" else quoted)
    return join.join(parts)


def search_events(conn: sqlite3.Connection, terms: list[tuple[str, str]], selection: EventSelection,
                  *, sort: str, limit: int, time_budget: float) -> list[dict]:
    """The matching events (newest first, or by rank), each with a snippet of the first
    column that matched and that column's name; QueryTimeout when the search's
    statements outlast `time_budget` seconds."""
    match = match_expression(terms)
    deadline = time.monotonic() + time_budget

    def late() -> bool:
        return time.monotonic() > deadline

    raw = getattr(conn, "conn", conn)  # the sqlite3 connection under a sqlite_utils handle
    raw.set_progress_handler(late, PROGRESS_STEPS)
    try:
        if selection.session_ids:
            rows = _session_events(conn, match, selection, sort, limit)
        else:
            rows = _matches(conn, match, selection, sort, limit)
        found = [dict(zip(_FIELDS, row)) for row in rows]
        snippets = _snippets(conn, terms, [event.pop("key") for event in found], late, time_budget)
        for event, (field, snippet) in zip(found, snippets, strict=True):
            event["field"], event["snippet"] = field, snippet
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_INTERRUPT:
            raise budget_exceeded(time_budget) from None
        if "fts5" in str(exc):  # the engine refused the query: the user's to fix
            raise InvalidInput(f"search query not understood: {exc}") from None
        raise
    finally:
        raw.set_progress_handler(None, 0)
    return found


def _filters(selection: EventSelection) -> tuple[list[str], list]:
    clauses: list[str] = []
    params: list = []
    for column, values in (("s.agent_name", selection.agents), ("e.session_id", selection.session_ids),
                           ("e.event_type", selection.event_types)):
        if values:
            clauses.append(f"{column} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    return clauses, params


def _window(selection: EventSelection, column: str) -> tuple[list[str], list]:
    clauses, params = [], []
    if selection.since is not None:
        clauses.append(f"{column} >= {key_base('?')}")
        params += [selection.since, selection.since]
    if selection.until is not None:
        clauses.append(f"{column} < {key_base('?')}")
        params += [selection.until, selection.until]
    return clauses, params


def _matches(conn, match, selection, sort, limit):
    # CROSS JOIN keeps the order written: the index's matches drive, newest first.
    window, window_params = _window(selection, "f.rowid")
    filters, params = _filters(selection)
    where = "".join(f" AND {c}" for c in (*window, *filters))
    order = "f.rank, f.rowid DESC" if sort == "rank" else "f.rowid DESC"
    return conn.execute(
        f"SELECT {_COLUMNS} FROM events_fts f CROSS JOIN event_search_keys k ON k.key = f.rowid "
        f"CROSS JOIN events e ON e.id = k.event_rowid CROSS JOIN sessions s ON s.session_id = e.session_id "
        f"WHERE events_fts MATCH ?{where} ORDER BY {order} LIMIT ?",
        [match, *window_params, *params, limit]).fetchall()


def _session_events(conn, match, selection, sort, limit):
    # One session's events through its index, each looked up in the search index by key.
    window, window_params = _window(selection, "k.key")
    filters, params = _filters(selection)
    where = " AND ".join((*filters, *window))
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM events e INDEXED BY idx_events_session_ts "
        f"CROSS JOIN event_search_keys k ON k.event_rowid = e.id "
        f"CROSS JOIN sessions s ON s.session_id = e.session_id WHERE {where} "
        f"AND EXISTS (SELECT 1 FROM events_fts WHERE events_fts MATCH ? AND rowid = k.key) "
        f"ORDER BY k.key DESC{'' if sort == 'rank' else ' LIMIT ?'}",
        [*params, *window_params, match, *([] if sort == "rank" else [limit])]).fetchall()
    if sort == "rank":  # a session's matches are few: rank them here
        ranks = dict(conn.execute(
            f"SELECT rowid, rank FROM events_fts WHERE events_fts MATCH ? AND rowid IN "
            f"({', '.join('?' * len(rows))})", [match, *(r[-1] for r in rows)]).fetchall()) if rows else {}
        rows = sorted(rows, key=lambda r: ranks.get(r[-1], 0.0))[:limit]
    return rows


def _snippets(conn: sqlite3.Connection, terms: list[tuple[str, str]], keys: list[int],
              late: Callable[[], bool], time_budget: float) -> list[tuple[str | None, str | None]]:
    """(field, snippet) of each event (by key): the first of its windows that matches any
    term, highlighted by FTS5 in an in-memory table of the windows (search_text.py)."""
    if not keys:
        return []
    texts = {row[0]: row[1:] for row in conn.execute(
        f"SELECT key, {_NAMES} FROM event_search_content WHERE key IN ({', '.join('?' * len(keys))})", keys)}
    any_term = match_expression(terms, " OR ")
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as scratch:
        scratch.set_progress_handler(late, PROGRESS_STEPS)
        scratch.execute("CREATE VIRTUAL TABLE windows USING fts5(text, tokenize='porter unicode61')")

        def over(rows: list[tuple[int, str]], sql: str, params: list) -> list[tuple]:
            # The windows of one question (rowid, text), gone again after it (after an error,
            # the table is dropped with the connection). The progress handler sees only
            # statements of many steps, and FTS5 works in few: the clock is also read here.
            if late():
                raise budget_exceeded(time_budget)
            scratch.execute("BEGIN")
            scratch.executemany("INSERT INTO windows (rowid, text) VALUES (?, ?)", rows)
            answer = scratch.execute(sql, params).fetchall()
            scratch.execute("ROLLBACK")
            return answer

        chosen = first_matches([texts.get(key, (None,) * len(COLUMNS)) for key in keys], lambda windows: {
            row[0] for row in over(list(enumerate(windows)), "SELECT rowid FROM windows WHERE windows MATCH ?",
                                   [any_term])})
        snippets = dict(over(
            [(n, w.text) for n, w in enumerate(chosen) if w is not None],
            f"SELECT rowid, snippet(windows, 0, ?, ?, ?, {SNIPPET_TOKENS}) FROM windows WHERE windows MATCH ?",
            [MARK_START, MARK_END, ELLIPSIS, any_term]))
    # A widened window holds the one that matched, so it matches too; all but where a word
    # was cut in two at the window's edge (no place between words near), and it no longer does.
    return [(COLUMNS[w.field], _framed(snippets[n], w)) if w is not None and n in snippets else (None, None)
            for n, w in enumerate(chosen)]


def _framed(snippet: str, window: Window) -> str:
    """The snippet with `…` where its window cuts the field (FTS5 marks only its own cuts)."""
    if window.cut_before and not snippet.startswith(ELLIPSIS):
        snippet = ELLIPSIS + snippet.lstrip()
    if window.cut_after and not snippet.endswith(ELLIPSIS):
        snippet = snippet.rstrip() + ELLIPSIS
    return snippet
