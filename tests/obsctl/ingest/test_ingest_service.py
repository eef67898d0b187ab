"""The ingest service: validation, session lifecycle, idempotency, totals, timestamps."""

import pytest

from obsctl.errors import InvalidInput, PayloadTooLarge
from obsctl.services.ingest import ingest_events, parse_batch_body
from obsctl.services.sessions import get_session, list_sessions
from obsctl.vocabulary import is_error_event
from tests.conftest import event


def count_events(db) -> int:
    return db.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]


def test_event_defaults_and_auto_created_session(db):
    result = ingest_events(db, [{"tokens_in": 3}])
    assert result.as_response() == {"status": "ok", "processed": 1, "duplicates": 0}
    session = get_session(db, "unknown")
    assert session["agent_name"] == "unknown"
    assert session["status"] == "active"
    (ev,) = session["events"]
    assert ev["event_type"] == "generic"
    assert len(ev["event_id"]) == 36  # a generated UUID
    assert ev["timestamp"].endswith("Z") and len(ev["timestamp"]) == 24


def test_auto_created_session_takes_agent_and_earliest_timestamp(db):
    ingest_events(db, [
        event("s", timestamp="2026-01-01T10:00:05Z", agent_name="bot"),
        event("s", timestamp="2026-01-01T10:00:01Z"),
    ])
    session = get_session(db, "s")
    assert session["agent_name"] == "bot"
    assert session["started_at"] == "2026-01-01T10:00:01.000Z"


def test_session_start_creates_session_with_metadata(db):
    ingest_events(db, [event("s", "session_start", agent_name="planner", metadata={"user": "u1"},
                             timestamp="2026-02-01T00:00:00Z")])
    session = get_session(db, "s")
    assert (session["agent_name"], session["metadata"], session["status"]) == ("planner", {"user": "u1"}, "active")
    assert session["started_at"] == "2026-02-01T00:00:00.000Z"


def test_late_session_start_fills_agent_and_moves_start_earlier(db):
    ingest_events(db, [event("s", timestamp="2026-02-01T00:00:10Z", tokens_in=5)])
    ingest_events(db, [event("s", "session_start", agent_name="planner", metadata={"k": 1},
                             timestamp="2026-02-01T00:00:00Z")])
    session = get_session(db, "s")
    assert session["agent_name"] == "planner"
    assert session["metadata"] == {"k": 1}
    assert session["started_at"] == "2026-02-01T00:00:00.000Z"
    assert [e["event_type"] for e in session["events"]] == ["session_start", "llm_call"]


def test_session_start_requires_session_id_and_agent_name(db):
    with pytest.raises(InvalidInput) as info:
        ingest_events(db, [{"event_type": "session_start"}])
    assert {d["field"] for d in info.value.details} == {"session_id", "agent_name"}
    assert count_events(db) == 0


def test_session_end_sets_status_end_time_and_summed_totals(db):
    ingest_events(db, [
        event("s", tokens_in=10, tokens_out=4, timestamp="2026-03-01T00:00:00Z"),
        event("s", tokens_in=5, tokens_out=1, timestamp="2026-03-01T00:00:01Z"),
        event("s", "session_end", timestamp="2026-03-01T00:00:02+01:00"),
    ])
    session = get_session(db, "s")
    assert session["status"] == "completed"
    assert session["ended_at"] == "2026-02-28T23:00:02.000Z"
    assert (session["total_tokens_in"], session["total_tokens_out"]) == (15, 5)


def test_session_end_with_error_status_and_final_totals(db):
    ingest_events(db, [event("s", tokens_in=10),
                       event("s", "session_end", status="error", total_tokens_in=99, total_tokens_out=7)])
    session = get_session(db, "s")
    assert (session["status"], session["total_tokens_in"], session["total_tokens_out"]) == ("error", 99, 7)


def test_session_end_with_unknown_status_completes(db):
    ingest_events(db, [event("s", "session_end", status="weird")])
    assert get_session(db, "s")["status"] == "completed"


def test_session_end_for_unknown_session_creates_it(db):
    ingest_events(db, [event("ghost", "session_end")])
    assert get_session(db, "ghost")["status"] == "completed"


def test_duplicate_event_ids_are_counted_not_stored(db):
    batch = [event("s", event_id="e1", tokens_in=10), event("s", event_id="e2", tokens_in=1)]
    assert ingest_events(db, batch).duplicates == 0
    again = ingest_events(db, batch + [event("s", event_id="e3", tokens_in=100)])
    assert (again.processed, again.duplicates, again.stored) == (3, 2, 1)
    session = get_session(db, "s")
    assert session["total_tokens_in"] == 111
    assert session["event_count"] == 3


def test_duplicate_within_one_batch(db):
    result = ingest_events(db, [event("s", event_id="x", tokens_in=2), event("s", event_id="x", tokens_in=2)])
    assert (result.duplicates, count_events(db)) == (1, 1)
    assert get_session(db, "s")["total_tokens_in"] == 2


@pytest.mark.parametrize("field,value,message", [
    ("tokens_in", -1, "non-negative integer"),
    ("tokens_out", 1.5, "non-negative integer"),
    ("tokens_in", True, "non-negative integer"),
    ("tokens_in", "12", "non-negative integer"),
    ("duration_ms", -0.5, "non-negative number"),
    ("duration_ms", "fast", "non-negative number"),
    ("timestamp", "yesterday", "ISO 8601"),
    ("timestamp", "2026-13-01T00:00:00Z", "ISO 8601"),
    ("timestamp", 1700000000, "ISO 8601"),
    ("session_id", 42, "string"),
    ("session_id", "x" * 129, "at most 128"),
    ("event_id", "", "must not be empty"),
    ("model", ["gpt"], "string"),
    ("agent_name", "a" * 257, "at most 256"),
    ("input_data", "text", "JSON object"),
    ("output_data", [1, 2], "JSON object"),
    ("tool_call", 5, "JSON object"),
    ("decision_trace", "because", "JSON object"),
    ("metadata", [], "JSON object"),
])
def test_invalid_field_rejects_whole_batch(db, field, value, message):
    with pytest.raises(InvalidInput) as info:
        ingest_events(db, [event("ok"), {**event("bad"), field: value}])
    (detail,) = info.value.details
    assert detail["index"] == 1 and detail["field"] == field and message in detail["message"]
    assert count_events(db) == 0
    assert list_sessions(db)["total"] == 0


def test_every_bad_event_is_listed(db):
    with pytest.raises(InvalidInput) as info:
        ingest_events(db, [event(tokens_in=-1), "not an object", event(), event(timestamp="x", model=3)])
    pairs = [(d["index"], d["field"]) for d in info.value.details]
    assert pairs == [(0, "tokens_in"), (1, None), (3, "model"), (3, "timestamp")]
    assert "3 invalid events" in info.value.message


def test_null_optional_fields_are_accepted(db):
    ingest_events(db, [event(model=None, tokens_in=None, input_data=None, timestamp=None)])
    assert count_events(db) == 1


def test_timestamps_are_normalised_to_utc_milliseconds(db):
    ingest_events(db, [
        event("s", event_id="a", timestamp="2026-05-01T12:00:00+02:00"),
        event("s", event_id="b", timestamp="2026-05-01T10:00:00.123456"),
        event("s", event_id="c", timestamp="2026-05-01"),
    ])
    stamps = {e["event_id"]: e["timestamp"] for e in get_session(db, "s")["events"]}
    assert stamps == {"a": "2026-05-01T10:00:00.000Z", "b": "2026-05-01T10:00:00.123Z",
                      "c": "2026-05-01T00:00:00.000Z"}


def test_json_fields_round_trip_as_objects(db):
    payload = {"prompt": "héllo", "nested": {"list": [1, 2.5, None]}}
    ingest_events(db, [event("s", input_data=payload, tool_call={"name": "search", "input": {"q": "x"}})])
    (ev,) = get_session(db, "s")["events"]
    assert ev["input_data"] == payload
    assert ev["tool_call"] == {"name": "search", "input": {"q": "x"}}


@pytest.mark.parametrize("event_type,output,tool,expected", [
    ("error", None, None, True),
    ("timeout", None, None, True),
    ("rate_limit", None, None, True),
    ("tool_error", None, None, True),
    ("agent_error", None, None, True),
    ("llm_call", {"error": "boom"}, None, True),
    ("tool_call", None, {"name": "x", "error": "503"}, True),
    ("llm_call", {"error": ""}, None, False),
    ("llm_call", {"error": None}, {"name": "x"}, False),
    ("errors_report", None, None, False),
    ("error_recovered", None, None, False),
    ("llm_call", None, None, False),
])
def test_error_predicate(event_type, output, tool, expected):
    assert is_error_event(event_type, output, tool) is expected


def test_error_count_uses_the_predicate(db):
    ingest_events(db, [event("s", "rate_limit"), event("s", output_data={"error": "x"}), event("s")])
    assert get_session(db, "s")["error_count"] == 2


@pytest.mark.parametrize("event_type, is_error", [
    ("agent_error", True), ("llm_error", True), ("error_recovered", False), ("errors_report", False),
])
def test_ingest_stores_the_error_suffix_rule(db, event_type, is_error):
    # The same rule as the predicate, through the ingest path that stores events.is_error.
    ingest_events(db, [event("s", event_type), event("s")])
    session = get_session(db, "s")
    assert [e["is_error"] for e in session["events"]] == [is_error, False]
    assert session["error_count"] == int(is_error)


def test_batch_body_shape_and_size():
    assert parse_batch_body({"events": [1, 2]}, max_batch=2) == [1, 2]
    with pytest.raises(PayloadTooLarge):
        parse_batch_body({"events": [{}] * 3}, max_batch=2)
    for body in ([], {"events": {}}, {"event": []}, "x", None):
        with pytest.raises(InvalidInput):
            parse_batch_body(body, max_batch=10)


def test_sessions_list_filters_pages_and_counts(db):
    ingest_events(db, [event(f"s{i}", timestamp=f"2026-01-0{i + 1}T00:00:00Z") for i in range(5)]
                  + [event("s0", "session_end", status="error")])
    page = list_sessions(db, limit=2, offset=1)
    assert [s["session_id"] for s in page["sessions"]] == ["s3", "s2"]
    assert page["total"] == 5
    errors = list_sessions(db, status="error")
    assert [s["session_id"] for s in errors["sessions"]] == ["s0"] and errors["total"] == 1
    assert len(list_sessions(db, limit=10_000)["sessions"]) == 5
    with pytest.raises(InvalidInput):
        list_sessions(db, status="paused")


def test_values_json_cannot_hold_are_rejected_not_crashing(db):
    with pytest.raises(InvalidInput) as info:
        ingest_events(db, [event("s", input_data={"n": 2**70})])
    assert info.value.details[0]["field"] == "input_data"
    assert "64-bit" in info.value.details[0]["message"]
