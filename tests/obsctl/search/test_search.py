"""Full-text search over events (services/search.py) on both backends, on a hand-made set of
events whose matches are worked out by hand below."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from obsctl.errors import InvalidInput
from obsctl.services.ingest import ingest_events
from obsctl.services.search import parse_query, search_events
from obsctl.timeutil import format_ts

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def at(minutes: float) -> str:
    return format_ts(T0 + timedelta(minutes=minutes))


def ev(sid: str, eid: str, minutes: float, event_type: str, **fields) -> dict:
    return {"session_id": sid, "event_id": eid, "timestamp": at(minutes), "event_type": event_type, **fields}


# Which events hold which words (stems): timeout(s) a1 a2 b2 b3; timed (time) a3; retry a3 b2;
# "HTTP 503" a1; refund(s) + policy b1; nothing in c1 but a db_query.
EVENTS = [
    ev("s-a", "a0", 0, "session_start", agent_name="research-agent"),
    ev("s-a", "a1", 1, "tool_call", tool_call={"name": "web_search", "error": "HTTP 503 timeout after 30s"}),
    ev("s-a", "a2", 2, "llm_call", input_data={"prompt": "Summarise the timeouts of last week"},
       output_data={"text": "There were three"}),
    ev("s-a", "a3", 3, "decision", decision_trace={"reasoning": "the search timed out, retry with fetch_url"}),
    ev("s-b", "b0", 9, "session_start", agent_name="support-bot"),
    ev("s-b", "b1", 10, "llm_call", input_data={"prompt": "What is the refund policy?"},
       output_data={"text": "Refunds take 5 days"}),
    ev("s-b", "b2", 11, "timeout", output_data={"error": "timeout: retry after 20s"}),
    ev("s-b", "b3", 12, "llm_call", input_data={"prompt": "The customer waited"},
       output_data={"text": "Sorry for the timeout"}),
    ev("s-c", "c0", 19, "session_start", agent_name="router"),
    ev("s-c", "c1", 20, "tool_call", tool_call={"name": "db_query", "input": {"sql": "select 1"}}),
]


@pytest.fixture
def loaded(store):
    ingest_events(store, EVENTS)
    return store


def ids(data: dict) -> list[str]:
    return [r["event_id"] for r in data["results"]]


def marked(snippet: str) -> str:
    return " ".join(re.findall(r"\[([^\]]*)\]", snippet))


def test_a_word_finds_its_stems_newest_first(loaded):
    data = search_events(loaded, "timeout")
    assert ids(data) == ["b3", "b2", "a2", "a1"]
    assert (data["count"], data["more"], data["sort"], data["since"]) == (4, False, "time", None)
    first = data["results"][0]
    assert {k: first[k] for k in ("session_id", "agent_name", "event_type", "timestamp", "field")} == {
        "session_id": "s-b", "agent_name": "support-bot", "event_type": "llm_call", "timestamp": at(12),
        "field": "output_data"}
    assert marked(first["snippet"]) == "timeout"
    by_id = {r["event_id"]: r for r in data["results"]}
    assert by_id["a1"]["field"] == "tool_call" and marked(by_id["a2"]["snippet"]) == "timeouts"


def test_words_are_anded_phrases_keep_order_and_prefixes_extend(loaded):
    assert ids(search_events(loaded, "timeout retry")) == ["b2"]
    assert ids(search_events(loaded, "refund policy")) == ["b1"]
    phrase = search_events(loaded, '"HTTP 503"')
    assert ids(phrase) == ["a1"] and marked(phrase["results"][0]["snippet"]) == "HTTP 503"
    assert ids(search_events(loaded, '"503 HTTP"')) == []
    assert ids(search_events(loaded, "time*")) == ["b3", "b2", "a3", "a2", "a1"]
    assert ids(search_events(loaded, "fetch_url")) == ["a3"]
    assert ids(search_events(loaded, "nowhere")) == []


def test_filters_agent_window_session_type(loaded):
    assert ids(search_events(loaded, "timeout", agent=["research-agent"])) == ["a2", "a1"]
    assert ids(search_events(loaded, "time*", agent=["research-agent", "router"])) == ["a3", "a2", "a1"]
    window = search_events(loaded, "timeout", since=at(5), until=at(12))
    assert ids(window) == ["b2"] and (window["since"], window["until"]) == (at(5), at(12))
    assert ids(search_events(loaded, "timeout", session="s-a", event_type="tool_call")) == ["a1"]
    assert ids(search_events(loaded, "timeout", event_type="timeout")) == ["b2"]


def test_limit_says_when_more_match(loaded):
    data = search_events(loaded, "timeout", limit=2)
    assert (ids(data), data["count"], data["more"]) == (["b3", "b2"], 2, True)
    assert search_events(loaded, "timeout", limit=4)["more"] is False


def test_rank_sort_finds_the_same_events(loaded):
    data = search_events(loaded, "timeout", sort="rank")
    assert data["sort"] == "rank" and sorted(ids(data)) == ["a1", "a2", "b2", "b3"]


def test_marks_are_the_callers(loaded):
    data = search_events(loaded, '"HTTP 503"', mark_start="<b>", mark_end="</b>")
    assert "<b>HTTP" in data["results"][0]["snippet"] and "503</b>" in data["results"][0]["snippet"]


@pytest.mark.parametrize(("q", "message"), [
    ("", "q is required"),
    ("   ", "q is required"),
    (None, "q is required"),
    ('"HTTP 503', "unmatched double quote"),
    ("!!! ,", "no word to search for"),
    ("ti-me*", "a prefix search takes letters and digits"),
    ("fetch_*", "a prefix search takes letters and digits"),
    ("x" * 501, "at most 500 characters"),
    (" ".join(["w"] * 17), "at most 16 words"),
])
def test_bad_queries_are_refused(loaded, q, message):
    with pytest.raises(InvalidInput, match=message):
        search_events(loaded, q)


def test_bad_sort_limit_and_window_are_refused(loaded):
    with pytest.raises(InvalidInput, match="sort must be one of time, rank"):
        search_events(loaded, "timeout", sort="best")
    with pytest.raises(InvalidInput, match="limit must be an integer from 1 to 200"):
        search_events(loaded, "timeout", limit=0)
    with pytest.raises(InvalidInput, match="since must be an ISO 8601 time"):
        search_events(loaded, "timeout", since="yesterday")


def test_operator_words_are_words():
    assert parse_query('timeout OR "rate limit" NOT time*') == [
        ("word", "timeout"), ("word", "OR"), ("phrase", "rate limit"), ("word", "NOT"), ("prefix", "time")]


def test_deleted_sessions_leave_the_index(loaded):
    from obsctl.services.sessions.housekeeping import delete_session

    delete_session(loaded, "s-b")
    assert ids(search_events(loaded, "timeout")) == ["a2", "a1"]
    ingest_events(loaded, [ev("s-d", "d1", 30, "llm_call", output_data={"text": "a new timeout"})])
    assert ids(search_events(loaded, "timeout")) == ["d1", "a2", "a1"]


def test_contents_filled_later_are_found_and_old_ones_forgotten(loaded):
    # OTLP fills an event's contents when its log records arrive after the span.
    def fill(store):
        store.otlp.set_event_contents([(json.dumps({"prompt": "budget overrun"}), None, None, "a2")])

    with loaded.transaction():
        fill(loaded)
    assert ids(search_events(loaded, "budget")) == ["a2"]
    assert ids(search_events(loaded, "timeout")) == ["b3", "b2", "a1"]


def test_http_answers_as_the_service(client, loaded):
    response = client.get("/search?q=timeout&agent=research-agent&agent=support-bot&limit=3")
    assert response.status_code == 200
    assert response.get_json() == search_events(loaded, "timeout", agent=["research-agent", "support-bot"], limit=3)
    for bad in ("/search", "/search?q=", '/search?q="open', "/search?q=x&sort=best", "/search?q=x&limit=abc"):
        refused = client.get(bad)
        assert refused.status_code == 400 and set(refused.get_json()) == {"error"}, bad


def test_event_type_has_its_older_name_type_everywhere(cli, client, loaded):
    """`event_type` is the parameter's name (`--event-type`); `type` (`--type`) still works."""
    expected = ids(search_events(loaded, "timeout", event_type="tool_call"))
    assert expected == ["a1"]
    for query in ("event_type=tool_call", "type=tool_call"):
        assert ids(client.get(f"/search?q=timeout&{query}").get_json()) == expected, query
    for option in ("--event-type", "--type"):
        printed = cli("search", "timeout", option, "tool_call", "--json")
        assert printed.exit_code == 0 and ids(json.loads(printed.stdout)) == expected, option
    params = {p["name"]: p for p in client.get("/openapi.json").get_json()["paths"]["/search"]["get"]["parameters"]}
    assert params["type"]["deprecated"] is True and "deprecated" not in params["event_type"]


def test_cli_json_is_the_http_body(cli, client, loaded):
    result = cli("search", "time*", "--agent", "research-agent", "--since", at(2), "--until", at(60), "--json")
    assert result.exit_code == 0
    body = client.get(f"/search?q=time*&agent=research-agent&since={at(2)}&until={at(60)}").get_json()
    assert json.loads(result.stdout) == body and ids(body) == ["a3", "a2"]


def test_cli_piped_output_marks_matches(cli, loaded):
    result = cli("search", '"HTTP 503"', "--mark-start", "<<", "--mark-end", ">>")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "timestamp\tsession\tagent\ttype\tevent\tfield\tsnippet"
    assert lines[1].split("\t")[:6] == [at(1), "s-a", "research-agent", "tool_call", "a1", "tool_call"]
    assert "<<HTTP" in lines[1] and "503>>" in lines[1]


def test_cli_refuses_bad_queries_as_usage_errors(cli, loaded):
    for args in (("search", '"open'), ("search", ""), ("search", "x", "--sort", "best")):
        result = cli(*args)
        assert result.exit_code == 2 and "Traceback" not in result.output, args


def test_terminal_shows_matches_in_bold(cli, loaded, terminal):
    result = cli("search", '"HTTP 503"', env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "1 event matching '\"HTTP 503\"'" in result.stdout
    assert "[" not in result.stdout.split("\n", 2)[2]  # bold, not markers


def test_window_bounds_and_events_of_one_millisecond(store):
    # Three events in one millisecond: newest first is the order they were stored, reversed.
    ingest_events(store, [ev("s-t", f"t{n}", 30, "llm_call", output_data={"text": "tie"}) for n in range(3)]
                  + [ev("s-t", "t3", 31, "llm_call", output_data={"text": "tie"})])
    assert ids(search_events(store, "tie")) == ["t3", "t2", "t1", "t0"]
    assert ids(search_events(store, "tie", since=at(30), until=at(31))) == ["t2", "t1", "t0"]
    assert ids(search_events(store, "tie", since=at(31), until=at(32))) == ["t3"]
    assert ids(search_events(store, "tie", session="s-t", since=at(30), until=at(31), limit=2)) == ["t2", "t1"]


def test_one_sessions_matches_by_rank(loaded):
    data = search_events(loaded, "timeout", session="s-b", sort="rank")
    assert sorted(ids(data)) == ["b2", "b3"]


@pytest.mark.sqlite_only
def test_the_migration_indexes_events_stored_before_it(db_path):
    from tests.store_support import open_db

    store = open_db(db_path)
    ingest_events(store, EVENTS)
    # As before m022: no index, no triggers, the migrations not recorded (m025 and m036 change
    # m022's).
    store.conn.executescript("""
        DROP TRIGGER events_fts_delete; DROP TRIGGER events_fts_update;
        DROP TABLE events_fts; DROP VIEW event_search_content; DROP TABLE event_search_keys;
        DROP TABLE search_progress; DROP TRIGGER search_progress_after_delete;
        DELETE FROM _sqlite_migrations WHERE name IN ('m022_event_search', 'm025_search_indexed_text_cap',
                                                      'm036_search_after_commit');""")
    store.close()
    store = open_db(db_path)
    try:
        assert ids(search_events(store, "timeout")) == ["b3", "b2", "a2", "a1"]
        # Events with no text (session starts, c1 has a tool call) are not indexed.
        assert store.conn.execute("SELECT COUNT(*) FROM events_fts_docsize").fetchone()[0] == 7
    finally:
        store.close()


def test_a_copied_store_is_searchable(store, tmp_path):
    from obsctl.services.transfer import copy_store
    from tests.store_support import open_db

    ingest_events(store, EVENTS)
    target = open_db(tmp_path / "copy.db")
    try:
        copy_store(store, target)
        assert ids(search_events(target, "timeout")) == ["b3", "b2", "a2", "a1"]
    finally:
        target.close()


@pytest.mark.sqlite_only
def test_the_index_triggers_leave_ingest_counts_exact(store):
    # The triggers change rows of their own: ingest counts only the events it inserted, so
    # the rollups and a session_start's tags are written once, the batch not redone.
    start = {**EVENTS[0], "tags": {"team": "research"}}
    ingest_events(store, [start, *EVENTS[1:]])
    assert store.conn.execute("SELECT events FROM event_totals").fetchone()[0] == 10
    assert store.conn.execute("SELECT SUM(event_count) FROM event_stats").fetchone()[0] == 10
    assert store.conn.execute("SELECT key, value FROM session_tags").fetchall() == [("team", "research")]


@pytest.mark.postgresql_only
def test_the_postgresql_migration_indexes_events_stored_before_it(db_url, backend):
    from tests.store_support import open_pg

    store = open_pg(db_url)
    ingest_events(store, EVENTS)
    store.conn.execute("ALTER TABLE events DROP COLUMN search_vector")
    store.conn.execute("DROP FUNCTION obsctl_search_vector")
    store.conn.execute("DELETE FROM _obsctl_migrations WHERE name IN ('m022_event_search', 'm025_search_indexed_text_cap')")
    store.close()
    store = open_pg(db_url)
    try:
        assert ids(search_events(store, "timeout")) == ["b3", "b2", "a2", "a1"]
    finally:
        store.close()
