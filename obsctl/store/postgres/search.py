"""Full-text search over events on PostgreSQL (the answers of obsctl/store/sqlite/search.py
as far as the engines agree; docs/search.md lists where they differ).

The index is a GIN index on `events.search_vector`, the stored `english` tsvector of the four
text columns (`obsctl_search_vector(...)`, migration m022); a query is the AND (&&) of one tsquery per term: plainto_ for
a word, phraseto_ for a phrase, to_tsquery('word:*') for a prefix. The planner chooses between
the index's matches sorted by time and the timestamp index filtered by the match, on the
statistics ANALYZE keeps for the expression. Snippets come from ts_headline on the page's rows.
"""

from __future__ import annotations

import psycopg

from obsctl.models.sessions import EventSelection
from obsctl.store.postgres.events import _where as selection_where

COLUMNS = ("input_data", "output_data", "tool_call", "decision_trace")
# Text past this many characters of an event is not indexed: a tsvector holds at most 1 MB,
# and an event over it would otherwise be refused at ingest.
INDEXED_CHARS = 100_000
CREATE_FUNCTION = f"""
CREATE FUNCTION obsctl_search_vector(a TEXT, b TEXT, c TEXT, d TEXT) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, left(concat_ws(' ', a, b, c, d), {INDEXED_CHARS}))
$$
"""
VECTOR = f"obsctl_search_vector({', '.join(COLUMNS)})"
MARK_START, MARK_END = "\x02", "\x03"
_HEADLINE_OPTIONS = (f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=16, MinWords=6, "
                     "MaxFragments=1, FragmentDelimiter=\" … \"")
_FIELDS = ("event_id", "session_id", "agent_name", "event_type", "timestamp")


def query_expression(terms: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The tsquery SQL for the parsed terms (services/search.py) and its parameters."""
    parts, params = [], []
    for kind, text in terms:
        if kind == "prefix":
            parts.append("to_tsquery('english', %s)")
            params.append(f"{text}:*")
        else:
            parts.append(f"{'phraseto' if kind == 'phrase' else 'plainto'}_tsquery('english', %s)")
            params.append(text)
    return " && ".join(parts), params


def search_events(conn: psycopg.Connection, terms: list[tuple[str, str]], selection: EventSelection,
                  *, sort: str, limit: int) -> list[dict]:
    """As the SQLite store's `search_events`."""
    query, query_params = query_expression(terms)
    clauses, params = selection_where(selection)
    where = "".join(f" AND {c}" for c in clauses)
    rank = "ts_rank(e.search_vector, q.query)" if sort == "rank" else "0"
    headlines = ", ".join(f"ts_headline('english', e.{c}, q.query, %s)" for c in COLUMNS)
    rows = conn.execute(
        f"""WITH q AS (SELECT {query} AS query),
                 page AS (SELECT e.id, e.timestamp, {rank} AS rank FROM events e JOIN sessions s ON s.session_id = e.session_id,
                          q WHERE e.search_vector @@ q.query{where}
                          ORDER BY {"rank DESC, " if sort == "rank" else ""}e.timestamp DESC, e.id DESC LIMIT %s)
            SELECT e.event_id, e.session_id, s.agent_name, e.event_type, e.timestamp, {headlines}
            FROM page p JOIN events e ON e.id = p.id AND e.timestamp = p.timestamp
            JOIN sessions s ON s.session_id = e.session_id, q
            ORDER BY p.rank DESC, p.timestamp DESC, p.id DESC""",
        [*query_params, *params, limit, *[_HEADLINE_OPTIONS] * len(COLUMNS)]).fetchall()
    found = []
    for row in rows:
        event = dict(zip(_FIELDS, row[:len(_FIELDS)]))
        event["field"], event["snippet"] = next(
            ((c, text) for c, text in zip(COLUMNS, row[len(_FIELDS):]) if text and MARK_START in text),
            (None, None))
        found.append(event)
    return found
