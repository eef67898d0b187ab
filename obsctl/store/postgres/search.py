"""Full-text search over events on PostgreSQL (the answers of obsctl/store/sqlite/search.py
as far as the engines agree; docs/search.md lists where they differ).

The index is a GIN index on `events.search_vector`, the stored `english` tsvector of the four
text columns (`obsctl_search_vector(...)`, migration m022; each cut at INDEXED_CHARS since
m025); a query is the AND (&&) of one tsquery per term: plainto_ for a word, phraseto_ for a
phrase, to_tsquery('word:*') for a prefix. The planner chooses between the index's matches
sorted by time and the timestamp index filtered by the match, on the statistics ANALYZE keeps
for the expression.

Snippets come from ts_headline over one window of a field (obsctl/store/search_text.py), the
first that matches any term, never over the whole field: its cost grows with the text and,
for a query whose words are not all in that text, with its square. The search's statements
run in a transaction of their own with statement_timeout set to what is left of its time
budget.
"""

from __future__ import annotations

import time

import psycopg
from psycopg import pq

from obsctl.models.sessions import EventSelection
from obsctl.store.search_text import COLUMNS, INDEXED_CHARS, budget_exceeded, first_matches
from obsctl.store.sql import POSTGRES, one
from obsctl.store.sql.events import selection_where

# m022's vector: the first 100,000 characters of the four columns together (a tsvector holds
# at most 1 MB, and an event over it would otherwise be refused at ingest).
M022_TEXT = "left(concat_ws(' ', a, b, c, d), 100000)"
# m025's: the first INDEXED_CHARS characters of each column (4 x 32,768 characters make at
# most about 0.4 MB of tsvector, measured with four-byte characters, each a word).
_TEXT = f"concat_ws(' ', {', '.join(f'left({c}, {INDEXED_CHARS})' for c in 'abcd')})"


def create_function(text: str = _TEXT, *, replace: bool = False) -> str:
    return f"""
CREATE {'OR REPLACE ' if replace else ''}FUNCTION obsctl_search_vector(a TEXT, b TEXT, c TEXT, d TEXT) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, {text})
$$
"""


CREATE_FUNCTION_M022 = create_function(M022_TEXT)
VECTOR = f"obsctl_search_vector({', '.join(COLUMNS)})"
MARK_START, MARK_END = "\x02", "\x03"
_HEADLINE_OPTIONS = (f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=16, MinWords=6, "
                     "MaxFragments=1, FragmentDelimiter=\" … \"")
_FIELDS = ("event_id", "session_id", "agent_name", "event_type", "timestamp")


def cap_indexed_text(conn: psycopg.Connection) -> int:
    """Migration m025: the vector of each column's first INDEXED_CHARS characters. The
    function is replaced (the generated column calls it by name), and the events whose m022
    vector it changes (a column longer than the cap, or the four over m022's 100,000) are
    written again, which computes theirs anew. Returns how many."""
    conn.execute(create_function(replace=True))
    longer = " OR ".join(f"length({c}) > {INDEXED_CHARS}" for c in COLUMNS)
    return conn.execute(f"UPDATE events SET input_data = input_data "
                        f"WHERE {longer} OR length(concat_ws(' ', {', '.join(COLUMNS)})) > 100000").rowcount


def query_expression(terms: list[tuple[str, str]], join: str = " && ") -> tuple[str, list[str]]:
    """The tsquery SQL for the parsed terms (services/search.py) and its parameters: all of
    them (`join` " || ": any of them, as snippets look for)."""
    parts, params = [], []
    for kind, text in terms:
        if kind == "prefix":
            parts.append("to_tsquery('english', %s)")
            params.append(f"{text}:*")
        else:
            parts.append(f"{'phraseto' if kind == 'phrase' else 'plainto'}_tsquery('english', %s)")
            params.append(text)
    return join.join(parts), params


def search_events(conn: psycopg.Connection, terms: list[tuple[str, str]], selection: EventSelection,
                  *, sort: str, limit: int, time_budget: float) -> list[dict]:
    """As the SQLite store's `search_events`."""
    deadline = time.monotonic() + time_budget

    def budget() -> None:
        # What is left of the search's time for its next statement (SET LOCAL: this
        # transaction only).
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms < 1:
            raise budget_exceeded(time_budget)
        conn.execute("SELECT set_config('statement_timeout', %s, true)", [str(left_ms)])

    nested = conn.info.transaction_status != pq.TransactionStatus.IDLE
    try:
        previous = one(conn.execute("SHOW statement_timeout"))[0] if nested else None
        # A pipeline: each set_config goes out with the statement after it, in one round trip.
        with conn.pipeline(), conn.transaction():
            budget()
            rows = _page(conn, terms, selection, sort, limit)
            snippets = _snippets(conn, terms, [row[len(_FIELDS):] for row in rows], budget)
            if previous is not None:  # inside a caller's transaction: its own timeout again
                conn.execute("SELECT set_config('statement_timeout', %s, true)", [previous])
    except psycopg.errors.QueryCanceled:
        raise budget_exceeded(time_budget) from None
    found = []
    for row, (field, snippet) in zip(rows, snippets, strict=True):
        found.append({**dict(zip(_FIELDS, row[:len(_FIELDS)])), "field": field, "snippet": snippet})
    return found


def _page(conn: psycopg.Connection, terms: list[tuple[str, str]], selection: EventSelection,
          sort: str, limit: int) -> list[tuple]:
    """The page's events, each with the indexed text of its four columns."""
    query, query_params = query_expression(terms)
    clauses, params = selection_where(POSTGRES, selection)
    where = "".join(f" AND {c}" for c in clauses)
    rank = "ts_rank(e.search_vector, q.query)" if sort == "rank" else "0"
    texts = ", ".join(f"left(e.{c}, {INDEXED_CHARS})" for c in COLUMNS)
    # MATERIALIZED: the planner then costs the match generically, as it did while the
    # snippets also read `q` (a CTE read twice is materialized). Inlined, it saw the query's
    # words and chose, e.g. for "HTTP 503", to scan every partition (28 ms instead of 2.5).
    return conn.execute(
        f"""WITH q AS MATERIALIZED (SELECT {query} AS query),
                 page AS (SELECT e.id, e.timestamp, {rank} AS rank FROM events e JOIN sessions s ON s.session_id = e.session_id,
                          q WHERE e.search_vector @@ q.query{where}
                          ORDER BY {"rank DESC, " if sort == "rank" else ""}e.timestamp DESC, e.id DESC LIMIT %s)
            SELECT e.event_id, e.session_id, s.agent_name, e.event_type, e.timestamp, {texts}
            FROM page p JOIN events e ON e.id = p.id AND e.timestamp = p.timestamp
            JOIN sessions s ON s.session_id = e.session_id
            ORDER BY p.rank DESC, p.timestamp DESC, p.id DESC""",
        [*query_params, *params, limit]).fetchall()


def _snippets(conn: psycopg.Connection, terms: list[tuple[str, str]], texts: list[tuple],
              budget) -> list[tuple[str | None, str | None]]:
    """(field, snippet) of each event: ts_headline over the first of its windows that
    matches any term (search_text.py)."""
    any_term, params = query_expression(terms, " || ")
    windows = f"unnest(%s::text[]) WITH ORDINALITY AS w(text, n), (SELECT {any_term} AS query) q"

    def matching(texts: list[str]) -> set[int]:
        budget()
        return {row[0] for row in conn.execute(
            f"SELECT w.n - 1 FROM {windows} WHERE to_tsvector('english', w.text) @@ q.query", [texts, *params])}

    chosen = first_matches(texts, matching)
    marked = [w for w in chosen if w is not None]
    if marked:
        budget()
        headlines = iter(row[0] for row in conn.execute(
            f"SELECT ts_headline('english', w.text, q.query, %s) FROM {windows} ORDER BY w.n",
            [_HEADLINE_OPTIONS, [w.text for w in marked], *params]))
    return [(None, None) if w is None else (COLUMNS[w.field], next(headlines)) for w in chosen]


def index_pending(conn: psycopg.Connection, limit: int = 5_000) -> int:
    """Nothing to index after the commit: the index is a generated column of `events` (m022),
    written with each row."""
    return 0


def pending(conn: psycopg.Connection) -> int:
    return 0
