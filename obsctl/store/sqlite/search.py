"""Full-text search over events on SQLite: an FTS5 index (porter stemming over unicode61
words) of input_data, output_data, tool_call and decision_trace (migration m022).

Newest first is the index's own order. Each indexed event has a search key in
`event_search_keys`: its timestamp in milliseconds times 16384, plus its place among the
events of the same millisecond (in the order they were stored). The key is the FTS5 rowid,
so that the index hands out matches newest first and stops at the page (`ORDER BY rowid
DESC LIMIT`), and a window (`since`, `until`) is a rowid range inside the index: neither
reads every match. The text itself stays in `events` alone (external content, read through
the view `event_search_content`); triggers on `events` keep keys and index in step in every
writing transaction (ingest, the server's writer, OTLP filling an event's contents later,
session delete, prune, `db copy`).

Filters on the session (agent) or the type are checked on each match, newest first, until the
page is full. One session's events are read through its own index, each looked up in the
search index by key. By rank (bm25) every match is scored: a common word costs its number of
matches.
"""

from __future__ import annotations

import sqlite3

from obsctl.errors import InvalidInput
from obsctl.models.sessions import EventSelection

# The indexed columns, in the order of the FTS5 table's columns (snippet() takes an index).
COLUMNS = ("input_data", "output_data", "tool_call", "decision_trace")
SLOTS_PER_MS = 16384  # keys per millisecond; keeps year 1 to 9999 within 64-bit integers
# An event is indexed (has a key) when it has one of them; removing an event's entry looks
# its key up, so it does nothing for an event never indexed.
_HAS_TEXT = " OR ".join(f"{{row}}.{c} IS NOT NULL" for c in COLUMNS)
_VALUES = ", ".join(f"{{row}}.{c}" for c in COLUMNS)
_NAMES = ", ".join(COLUMNS)


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
_ADD = f"""
    INSERT INTO event_search_keys (key, event_rowid) SELECT {_NEXT_KEY}, NEW.id WHERE {_HAS_TEXT.format(row='NEW')};
    INSERT INTO events_fts (rowid, {_NAMES})
    SELECT key, {_VALUES.format(row='NEW')} FROM event_search_keys WHERE event_rowid = NEW.id;"""
_REMOVE = f"""
    INSERT INTO events_fts (events_fts, rowid, {_NAMES})
    SELECT 'delete', key, {_VALUES.format(row='OLD')} FROM event_search_keys WHERE event_rowid = OLD.id;
    DELETE FROM event_search_keys WHERE event_rowid = OLD.id;"""

CREATE_INDEX = f"""
CREATE TABLE event_search_keys (
    key INTEGER PRIMARY KEY,
    event_rowid INTEGER NOT NULL UNIQUE
);
CREATE VIEW event_search_content AS
    SELECT k.key, {', '.join('e.' + c for c in COLUMNS)}
    FROM event_search_keys k JOIN events e ON e.id = k.event_rowid;
CREATE VIRTUAL TABLE events_fts USING fts5(
    {_NAMES}, content='event_search_content', content_rowid='key', tokenize='porter unicode61');
CREATE TRIGGER events_fts_insert AFTER INSERT ON events WHEN {_HAS_TEXT.format(row='NEW')}
BEGIN {_ADD}
END;
CREATE TRIGGER events_fts_delete AFTER DELETE ON events WHEN {_HAS_TEXT.format(row='OLD')}
BEGIN {_REMOVE}
END;
CREATE TRIGGER events_fts_update AFTER UPDATE OF {_NAMES}, timestamp ON events
BEGIN {_REMOVE}{_ADD}
END;
"""

BACKFILL_BATCH = 20_000
# Markers of the matched words in snippets, replaced by the caller's (services/search.py).
MARK_START, MARK_END = "\x02", "\x03"
SNIPPET_TOKENS = 16

_COLUMNS = "e.event_id, e.session_id, s.agent_name, e.event_type, e.timestamp, k.key"
_FIELDS = ("event_id", "session_id", "agent_name", "event_type", "timestamp", "key")


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


def match_expression(terms: list[tuple[str, str]]) -> str:
    """The FTS5 query for the parsed terms (services/search.py): every term a quoted string,
    so no word is read as an operator; a prefix term ends with `*`. Terms are ANDed."""
    parts = []
    for kind, text in terms:
        quoted = '"' + text.replace('"', '""') + '"'
        parts.append(quoted + " *" if kind == "prefix" else quoted)
    return " AND ".join(parts)


def search_events(conn: sqlite3.Connection, terms: list[tuple[str, str]], selection: EventSelection,
                  *, sort: str, limit: int) -> list[dict]:
    """The matching events (newest first, or by rank), each with a snippet of the first
    column that matched and that column's name."""
    match = match_expression(terms)
    try:
        if selection.session_ids:
            rows = _session_events(conn, match, selection, sort, limit)
        else:
            rows = _matches(conn, match, selection, sort, limit)
        found = [dict(zip(_FIELDS, row)) for row in rows]
        for event in found:
            event["field"], event["snippet"] = _snippet(conn, match, event.pop("key"))
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc):  # the engine refused the query: the user's to fix
            raise InvalidInput(f"search query not understood: {exc}") from None
        raise
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


def _snippet(conn: sqlite3.Connection, match: str, key: int) -> tuple[str | None, str | None]:
    snippets = ", ".join(f"snippet(events_fts, {i}, ?, ?, '…', {SNIPPET_TOKENS})" for i in range(len(COLUMNS)))
    row = conn.execute(f"SELECT {snippets} FROM events_fts WHERE events_fts MATCH ? AND rowid = ?",
                       [*(MARK_START, MARK_END) * len(COLUMNS), match, key]).fetchone()
    if row is None:
        return None, None
    for column, text in zip(COLUMNS, row):
        if text and MARK_START in text:
            return column, text
    return None, None

