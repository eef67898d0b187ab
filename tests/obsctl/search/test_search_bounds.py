"""Search does bounded work whatever the events hold (issue 32): text past a cap is not
indexed, snippets come from a window of a field, a search stops at its time budget, and a
NUL in the query is the caller's mistake. On both backends, through the real Flask app, on
events stored by the ingest service."""

from __future__ import annotations

import re
import time

import pytest

from obsctl.services import search as search_service
from obsctl.services.ingest import ingest_events
from obsctl.store.search_text import INDEXED_CHARS, budget_exceeded

# The planted event of the report: its output repeats one word 30,000 times (239 KB), which
# FTS5's snippet() took seconds over. The second one's input holds a phrase of that word that
# its output does not, which ts_headline took seconds to look for over the output.
TIMEOUTS = " ".join(["timeout"] * 30_000)
REPEATED = {"session_id": "s-planted", "event_id": "planted", "agent_name": "planter",
            "timestamp": "2026-11-20T09:00:00.000Z", "event_type": "llm_call",
            "output_data": {"text": TIMEOUTS}}
PHRASE = {**REPEATED, "event_id": "phrase", "timestamp": "2026-11-20T08:30:00.000Z",
          "input_data": {"prompt": "why a timeout retry timeout loop"}}
ORDINARY = {"session_id": "s-ordinary", "event_id": "ordinary", "agent_name": "worker",
            "timestamp": "2026-11-20T08:00:00.000Z", "event_type": "tool_call",
            "tool_call": {"name": "fetch", "error": "timeout after 30 s"}}


def marked(snippet: str) -> list[str]:
    return re.findall(r"\[([^\]]*)\]", snippet)


def timed_get(client, url: str):
    started = time.perf_counter()
    response = client.get(url)
    return response, time.perf_counter() - started


@pytest.fixture
def planted(store):
    ingest_events(store, [ORDINARY, PHRASE, REPEATED])
    return store


def test_a_field_repeating_one_word_answers_at_once(client, planted):
    response, seconds = timed_get(client, "/search?q=timeout&limit=1")
    assert response.status_code == 200
    (result,) = response.get_json()["results"]
    assert (result["event_id"], result["field"]) == ("planted", "output_data")
    assert set(marked(result["snippet"])) == {"timeout"} and len(marked(result["snippet"])) >= 6
    assert seconds < 0.5  # 14 s with snippet() over the whole field on SQLite


def test_a_phrase_not_in_the_repeating_field_answers_at_once(client, planted):
    response, seconds = timed_get(client, '/search?q="timeout retry timeout"')
    assert response.status_code == 200
    (result,) = response.get_json()["results"]
    assert (result["event_id"], result["field"]) == ("phrase", "input_data")
    # FTS5 marks the phrase, ts_headline each of its words.
    assert " ".join(marked(result["snippet"])) == "timeout retry timeout"
    assert seconds < 0.5  # seconds of ts_headline over the output on PostgreSQL


def test_a_snippet_deep_in_a_long_field_shows_the_match_and_its_neighbours(store):
    text = " ".join(f"filler{n}" for n in range(3000)) + " the upstream answered 503 " + " ".join(
        f"after{n}" for n in range(500))
    ingest_events(store, [{**ORDINARY, "tool_call": None, "output_data": {"text": text}}])
    (result,) = search_service.search_events(store, "upstream")["results"]
    assert result["field"] == "output_data" and marked(result["snippet"]) == ["upstream"]
    assert "filler2999" in result["snippet"] and "503" in result["snippet"]
    if store.backend == "sqlite":  # FTS5 marks where the text is cut; ts_headline does not
        assert result["snippet"].startswith("…") and result["snippet"].endswith("…")


def test_text_past_the_cap_of_a_field_is_not_indexed(store):
    filler = "x " * (INDEXED_CHARS // 2)
    ingest_events(store, [
        {**ORDINARY, "event_id": "past", "tool_call": None,
         "input_data": {"prompt": filler + "faraway"}, "output_data": {"text": "nearby"}},
        # A long input no longer crowds the other fields out of the index (PostgreSQL
        # indexed the first 100,000 characters of the four together).
        {**ORDINARY, "event_id": "after-long-input", "timestamp": "2026-11-20T08:00:01.000Z", "tool_call": None,
         "input_data": {"prompt": "y " * 60_000}, "output_data": {"text": "afterlong"}},
    ])
    assert [r["event_id"] for r in search_service.search_events(store, "faraway")["results"]] == []
    assert [r["event_id"] for r in search_service.search_events(store, "nearby")["results"]] == ["past"]
    assert [r["event_id"] for r in search_service.search_events(store, "afterlong")["results"]] == ["after-long-input"]


def test_a_search_over_its_time_budget_answers_504(client, store, monkeypatch):
    ingest_events(store, [{**ORDINARY, "event_id": f"e{n}", "session_id": f"s{n % 20}",
                           "timestamp": f"2026-11-20T08:{n // 1000:02d}:{n // 10 % 60:02d}.{n % 1000:03d}Z",
                           "tool_call": None, "output_data": {"text": f"timeout number {n}"}}
                          for n in range(3000)])
    assert client.get("/search?q=timeout&sort=rank").status_code == 200  # 20 to 25 ms
    # Less than the ranking statement takes (stopped inside it), and than reaching the
    # snippets of a page newest first takes (stopped before them).
    monkeypatch.setattr(search_service, "TIME_BUDGET_S", 0.0005)
    started = time.perf_counter()
    response = client.get("/search?q=timeout&sort=rank")
    assert time.perf_counter() - started < 1.0
    assert response.status_code == 504
    assert response.get_json() == {"error": budget_exceeded(0.0005).message}
    assert "time budget of 0.0005 s" in response.get_json()["error"]
    page = client.get("/ui/search?q=timeout")  # the dashboard's search page says the same
    assert page.status_code == 504 and "time budget of 0.0005 s" in page.get_data(as_text=True)


@pytest.mark.parametrize("url", ["/search?q=time%00out", '/search?q="ti%00me"', "/search?q=ti%00*",
                                 "/search?q=timeout&agent=a%00b", "/search?q=timeout&session=a%00b",
                                 "/search?q=timeout&type=a%00b"])
def test_a_nul_in_the_query_is_refused(client, planted, url):
    response = client.get(url)
    assert response.status_code == 400
    assert "must not contain a NUL character" in response.get_json()["error"]


def test_the_cli_refuses_a_nul_in_the_query(cli, planted):
    result = cli("search", "time\x00out")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "q must not contain a NUL character" in result.output


def long_and_short_events() -> list[dict]:
    """An input with a word past the cap, and an output after an input of 120,000 characters."""
    return [{**ORDINARY, "event_id": "past", "tool_call": None,
             "input_data": {"prompt": "x " * (INDEXED_CHARS // 2) + "faraway"}, "output_data": {"text": "nearby"}},
            {**ORDINARY, "event_id": "after-long-input", "timestamp": "2026-11-20T08:00:01.000Z", "tool_call": None,
             "input_data": {"prompt": "y " * 60_000}, "output_data": {"text": "afterlong"}}]


def found(store, q: str) -> list[str]:
    return [r["event_id"] for r in search_service.search_events(store, q)["results"]]


@pytest.mark.sqlite_only
def test_the_migration_cuts_what_was_indexed_whole_before_it(db_path):
    from obsctl.services.sessions.housekeeping import delete_session
    from obsctl.store.sqlite import search as sqlite_search
    from tests.store_support import open_db

    store = open_db(db_path)
    # As before m025: whole fields indexed by triggers (m036 took the insert trigger away), the
    # migrations not recorded.
    store.conn.executescript(";\n".join([
        "CREATE TRIGGER events_fts_insert AFTER INSERT ON events BEGIN SELECT 1; END",  # as m036 found it
        *sqlite_search.DROP_VIEW_AND_TRIGGERS, *sqlite_search.view_and_triggers(None), "DROP TABLE search_progress",
        "DROP TRIGGER search_progress_after_delete",
        "DELETE FROM _sqlite_migrations WHERE name IN ('m025_search_indexed_text_cap', 'm036_search_after_commit')"]))
    ingest_events(store, long_and_short_events())
    # Indexed whole (read from the index itself: today's search needs m036's table).
    assert store.conn.execute("SELECT COUNT(*) FROM events_fts WHERE events_fts MATCH 'faraway'").fetchone()[0] == 1
    store.close()
    store = open_db(db_path)
    try:
        assert (found(store, "faraway"), found(store, "nearby")) == ([], ["past"])
        # FTS5 compares the index with the (cut) text it was made from; an event indexed whole
        # and taken out cut would leave its words past the cap behind.
        check = "INSERT INTO events_fts (events_fts, rank) VALUES ('integrity-check', 1)"
        store.conn.execute(check)
        delete_session(store, ORDINARY["session_id"])
        store.conn.execute(check)
        assert store.conn.execute("SELECT COUNT(*) FROM events_fts WHERE events_fts MATCH 'x'").fetchone()[0] == 0
    finally:
        store.close()


@pytest.mark.postgresql_only
def test_the_postgresql_migration_indexes_each_column_up_to_the_cap(db_url, backend):
    from obsctl.store.postgres import search as pg_search
    from tests.store_support import open_pg

    store = open_pg(db_url)
    # As before m025: the vector of the four columns' first 100,000 characters together.
    store.conn.execute(pg_search.create_function(pg_search.M022_TEXT, replace=True))
    store.conn.execute("DELETE FROM _obsctl_migrations WHERE name = 'm025_search_indexed_text_cap'")
    ingest_events(store, long_and_short_events())
    assert (found(store, "faraway"), found(store, "afterlong")) == (["past"], [])
    store.close()
    store = open_pg(db_url)
    try:
        assert (found(store, "faraway"), found(store, "afterlong")) == ([], ["after-long-input"])
    finally:
        store.close()
