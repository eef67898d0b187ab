"""Full-text search over events on SQLite: an FTS5 index (porter stemming over unicode61
words) of input_data, output_data, tool_call and decision_trace, external content (migration
m022; the text itself stays in `events`).

Newest first reads the matches one of two ways, whichever reads fewer rows:
- few matches (under COMMON_MATCHES): every match from the index, joined to its event and
  session for the filters, sorted by time; the cost follows the number of matches;
- a common query: the events newest first through the timestamp index (or the session's
  index), each tested against the index by rowid (`MATCH ... AND rowid = e.id`, a seek in the
  terms' lists), stopping at the page; the cost follows how far back the page reaches.
By rank (bm25) every match is scored, so a common word costs its number of matches.
"""

from __future__ import annotations

import sqlite3

from obsctl.errors import InvalidInput
from obsctl.models.sessions import EventSelection
from obsctl.store.sqlite.events import _where as selection_where

# The indexed columns, in the order of the FTS5 table's columns (snippet() takes an index).
COLUMNS = ("input_data", "output_data", "tool_call", "decision_trace")
# An event is indexed when it has one of them (the triggers and the backfill agree on it).
_HAS_TEXT = " OR ".join(f"{{row}}.{c} IS NOT NULL" for c in COLUMNS)
_VALUES = ", ".join(f"{{row}}.{c}" for c in COLUMNS)

CREATE_INDEX = f"""
CREATE VIRTUAL TABLE events_fts USING fts5(
    {', '.join(COLUMNS)}, content='events', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER events_fts_insert AFTER INSERT ON events WHEN {_HAS_TEXT.format(row='NEW')}
BEGIN
    INSERT INTO events_fts (rowid, {', '.join(COLUMNS)}) VALUES (NEW.id, {_VALUES.format(row='NEW')});
END;
CREATE TRIGGER events_fts_delete AFTER DELETE ON events WHEN {_HAS_TEXT.format(row='OLD')}
BEGIN
    INSERT INTO events_fts (events_fts, rowid, {', '.join(COLUMNS)})
    VALUES ('delete', OLD.id, {_VALUES.format(row='OLD')});
END;
CREATE TRIGGER events_fts_update AFTER UPDATE OF {', '.join(COLUMNS)} ON events
BEGIN
    INSERT INTO events_fts (events_fts, rowid, {', '.join(COLUMNS)})
    SELECT 'delete', OLD.id, {_VALUES.format(row='OLD')} WHERE {_HAS_TEXT.format(row='OLD')};
    INSERT INTO events_fts (rowid, {', '.join(COLUMNS)})
    SELECT NEW.id, {_VALUES.format(row='NEW')} WHERE {_HAS_TEXT.format(row='NEW')};
END;
"""

BACKFILL_BATCH = 20_000
# Matches counted before a query counts as common (the module docstring): at 1M events,
# reading this many rowids from the index takes about 2 ms.
COMMON_MATCHES = 20_000
# Markers of the matched words in snippets, replaced by the caller's (services/search.py).
MARK_START, MARK_END = "\x02", "\x03"
SNIPPET_TOKENS = 16

# CROSS JOIN keeps the order written: the planner may not start from the sessions.
_COLUMNS = "e.id, e.event_id, e.session_id, s.agent_name, e.event_type, e.timestamp"
_ROW = _COLUMNS + " FROM events e {hint} CROSS JOIN sessions s ON s.session_id = e.session_id"
_FIELDS = ("id", "event_id", "session_id", "agent_name", "event_type", "timestamp")


def index_existing(conn: sqlite3.Connection) -> int:
    """Index the events stored before the index existed, in batches of rowids (each batch's
    terms are merged into the index before the next is read); returns how many."""
    last, indexed = 0, 0
    while True:
        high = conn.execute("SELECT MAX(id) FROM (SELECT id FROM events WHERE id > ? ORDER BY id LIMIT ?)",
                            [last, BACKFILL_BATCH]).fetchone()[0]
        if high is None:
            return indexed
        indexed += conn.execute(
            f"INSERT INTO events_fts (rowid, {', '.join(COLUMNS)}) SELECT id, {_VALUES.format(row='events')} "
            f"FROM events WHERE id > ? AND id <= ? AND ({_HAS_TEXT.format(row='events')})", [last, high]).rowcount
        last = high


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
    clauses, params = selection_where(selection)
    try:
        if sort == "rank":
            rows = _by_rank(conn, match, clauses, params, limit)
        elif selection.session_ids or _is_common(conn, match):
            rows = _walking_time(conn, match, selection, clauses, params, limit)
        else:
            rows = _from_matches(conn, match, clauses, params, limit)
        found = [dict(zip(_FIELDS, row)) for row in rows]
        for event in found:
            event["field"], event["snippet"] = _snippet(conn, match, event.pop("id"))
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc):  # the engine refused the query: the user's to fix
            raise InvalidInput(f"search query not understood: {exc}") from None
        raise
    return found


def _is_common(conn: sqlite3.Connection, match: str) -> bool:
    return conn.execute("SELECT COUNT(*) FROM (SELECT rowid FROM events_fts WHERE events_fts MATCH ? LIMIT ?)",
                        [match, COMMON_MATCHES]).fetchone()[0] >= COMMON_MATCHES


def _and(clauses: list[str]) -> str:
    return "".join(f" AND {c}" for c in clauses)


def _from_matches(conn, match, clauses, params, limit):
    return conn.execute(
        f"SELECT {_ROW.format(hint='')} WHERE e.id IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ?)"
        f"{_and(clauses)} ORDER BY e.timestamp DESC, e.id DESC LIMIT ?", [match, *params, limit]).fetchall()


def _walking_time(conn, match, selection, clauses, params, limit):
    # The index to walk is named: the planner would otherwise start from the matches.
    index = "idx_events_session_ts" if selection.session_ids else "idx_events_ts"
    return conn.execute(
        f"SELECT {_ROW.format(hint=f'INDEXED BY {index}')} WHERE 1{_and(clauses)} "
        f"AND EXISTS (SELECT 1 FROM events_fts WHERE events_fts MATCH ? AND rowid = e.id) "
        f"ORDER BY e.timestamp DESC, e.id DESC LIMIT ?", [*params, match, limit]).fetchall()


def _by_rank(conn, match, clauses, params, limit):
    return conn.execute(
        f"SELECT {_COLUMNS} FROM events_fts f CROSS JOIN events e ON e.id = f.rowid "
        f"CROSS JOIN sessions s ON s.session_id = e.session_id WHERE events_fts MATCH ?"
        f"{_and(clauses)} ORDER BY f.rank, e.timestamp DESC, e.id DESC LIMIT ?", [match, *params, limit]).fetchall()


def _snippet(conn: sqlite3.Connection, match: str, row_id: int) -> tuple[str | None, str | None]:
    snippets = ", ".join(f"snippet(events_fts, {i}, ?, ?, '…', {SNIPPET_TOKENS})" for i in range(len(COLUMNS)))
    row = conn.execute(f"SELECT {snippets} FROM events_fts WHERE events_fts MATCH ? AND rowid = ?",
                       [*(MARK_START, MARK_END) * len(COLUMNS), match, row_id]).fetchone()
    if row is None:
        return None, None
    for column, text in zip(COLUMNS, row):
        if text and MARK_START in text:
            return column, text
    return None, None
