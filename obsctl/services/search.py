"""Full-text search over what events said: their input, output, tool call (with its error)
and reasoning (decision_trace), on every store backend (docs/search.md).

The query syntax is the same on every backend: words, all of which must appear (stemmed:
`timeouts` finds `timeout`); "quoted phrases", whose words must appear in that order; and
prefixes, `time*`. No operators: OR, NOT and the like are words to find. Results are the
newest events first (sort `time`) or the best matches first (sort `rank`), each with a
snippet of the field that matched, the matched words between `mark_start` and `mark_end`.

A search does bounded work whatever the events hold (the stores' search_text.py): each field
is indexed up to a cap, snippets come from a window of a field, and a search that outlasts its
time budget (TIME_BUDGET_S) stops with QueryTimeout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from obsctl.errors import InvalidInput
from obsctl.models.search import DEFAULT_MARKS, LIMIT, SORTS
from obsctl.services.search_index import catch_up
from obsctl.services.sessions.bulk_export import select_events
from obsctl.store import Store

MAX_QUERY_CHARS = 500
MAX_TERMS = 16
MAX_MARK_CHARS = 16
# Seconds a search's statements may take in all (docs/security.md); past them it stops with
# QueryTimeout (HTTP 504).
TIME_BUDGET_S = 5.0

# A quoted phrase, or a run of anything but spaces and quotes.
_TOKEN = re.compile(r'"([^"]*)"|([^\s"]+)')
_WORD_CHARS = re.compile(r"\w")
_PREFIX = re.compile(r"^[^\W_]+$")  # letters and digits: safe in every engine's prefix syntax
# The stores mark matched words with these (store/*/search.py MARK_START, MARK_END); the
# service puts the caller's marks in their place.
_STORE_START, _STORE_END = "\x02", "\x03"


def parse_query(q: str | None) -> list[tuple[str, str]]:
    """The terms of a query, each ("word" | "phrase" | "prefix", text); InvalidInput for a
    query that is empty, unbalanced or too long."""
    if q is None or type(q) is not str or not q.strip():
        raise InvalidInput('q is required: words to find, "a phrase", or a prefix like time*')
    _check_no_nul(q, "q")
    if len(q) > MAX_QUERY_CHARS:
        raise InvalidInput(f"q must be at most {MAX_QUERY_CHARS} characters; got {len(q)}")
    if q.count('"') % 2:
        raise InvalidInput('q has an unmatched double quote: close the "phrase"')
    terms: list[tuple[str, str]] = []
    for phrase, word in _TOKEN.findall(q):
        text = phrase if phrase else word
        if not _WORD_CHARS.search(text):
            continue  # punctuation alone (or an empty phrase) finds nothing on any backend
        if phrase:
            terms.append(("phrase", " ".join(phrase.split())))
        elif word.endswith("*"):
            stem = word.rstrip("*")
            if not _PREFIX.match(stem):
                raise InvalidInput(f"a prefix search takes letters and digits before the *; got {word[:40]!r}")
            terms.append(("prefix", stem))
        else:
            terms.append(("word", word))
    if not terms:
        raise InvalidInput("q has no word to search for (only punctuation)")
    if len(terms) > MAX_TERMS:
        raise InvalidInput(f"q may have at most {MAX_TERMS} words, phrases and prefixes; got {len(terms)}")
    return terms


def check_query(q: str) -> str:
    """`q` unchanged when it parses (the CLI's usage check)."""
    parse_query(q)
    return q


def check_sort(sort: str | None) -> str:
    sort = "time" if sort is None else sort
    if sort not in SORTS:
        raise InvalidInput(f"sort must be one of {', '.join(SORTS)}; got {str(sort)[:40]!r}")
    return sort


def _check_no_nul(value: str, name: str) -> None:
    # No engine takes it: SQLite's FTS5 reads it as the query's end, PostgreSQL refuses it.
    if "\x00" in value:
        raise InvalidInput(f"{name} must not contain a NUL character (\\x00)")


def _check_mark(value: str | None, default: str, name: str) -> str:
    if value is None:
        return default
    if type(value) is not str or len(value) > MAX_MARK_CHARS:
        raise InvalidInput(f"{name} must be text of at most {MAX_MARK_CHARS} characters")
    return value


def search_events(store: Store, q: str | None, *, agent: Iterable[str] | None = None,
                  since: str | None = None, until: str | None = None, session: str | None = None,
                  event_type: str | None = None, sort: str | None = None, limit: int | None = None,
                  mark_start: str | None = None, mark_end: str | None = None,
                  timeout: float | None = None) -> dict:
    """Events whose text matches `q` (module docstring), filtered by the session's agent (any
    of several), a time window (`since` an age like 1d or an ISO time, `until` an ISO time),
    a session and an event type; newest first or by rank, at most `limit`; QueryTimeout
    past `timeout` seconds (TIME_BUDGET_S unless given)."""
    terms = parse_query(q)
    for name, value in (("session", session), ("type", event_type), *(("agent", a) for a in agent or ())):
        if type(value) is str:
            _check_no_nul(value, name)
    sort = check_sort(sort)
    limit = LIMIT.resolve(limit)
    start = _check_mark(mark_start, DEFAULT_MARKS[0], "mark_start")
    end = _check_mark(mark_end, DEFAULT_MARKS[1], "mark_end")
    selection = select_events(since=since, until=until, agents=agent or (),
                              session_ids=() if session is None else (session,),
                              event_types=() if event_type is None else (event_type,))
    catch_up(store)  # every stored event is searched, whatever the indexer has done so far
    found = store.search.search_events(terms, selection, sort=sort, limit=limit + 1,
                                       time_budget=TIME_BUDGET_S if timeout is None else timeout)
    results = []
    for event in found[:limit]:
        snippet = event["snippet"]
        if snippet is not None:
            snippet = snippet.replace(_STORE_START, start).replace(_STORE_END, end)
        results.append({**event, "snippet": snippet})
    return {"query": q, "sort": sort, "since": selection.since, "until": selection.until,
            "count": len(results), "more": len(found) > limit, "results": results}

