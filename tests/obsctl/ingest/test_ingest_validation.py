"""validate_event reads every field at once and has two definitions inline (the error predicate,
normalize_ts's shortcut for normalised text): these hold it to the definitions it inlines and
pin its answers on the edge cases, accepted rows and messages alike."""

from __future__ import annotations

import itertools
from datetime import timedelta

import orjson
import pytest

from obsctl.models.ingest import MAX_TOKENS, EventRow
from obsctl.services.call_keys import call_key
from obsctl.services.ingest import EVENT_FIELDS, NO_LIMIT, UnknownFields, validate_event, validate_events
from obsctl.services.ingest.validation import _FIELD_ORDER
from obsctl.timeutil import normalize_ts
from obsctl.vocabulary import is_error_event, tool_field
from tests.conftest import event

NOW = "2026-01-15T12:00:00.000Z"
LIMIT = "2026-01-16T12:00:00.000Z"
SKEW = timedelta(days=1)
BIG = 2**70


def check(ev, *, strict: bool = False):
    errors: list[dict] = []
    return validate_event(ev, 0, errors, NOW, LIMIT, SKEW, strict), errors


def test_every_event_field_is_read_once():
    assert len(_FIELD_ORDER) == len(EVENT_FIELDS)
    assert set(_FIELD_ORDER) == EVENT_FIELDS


EVENT_TYPES = ["llm_call", "tool_call", "error", "timeout", "rate_limit", "llm_error", "errors", "generic"]
OUTPUTS = [None, {}, {"text": "t"}, {"error": "boom"}, {"error": ""}, {"error": None}, {"error": 0},
           {"error": {"code": 1}}]
TOOL_CALLS = [None, {}, {"name": "web"}, {"tool_name": "alias"}, {"name": None, "tool_name": "t"},
              {"name": 5}, {"name": "n" * 300}, {"error": "x"}, {"error": ""},
              {"tool_output": {"error": "y"}}, {"tool_output": {"error": ""}}, {"tool_output": "e"},
              {"error": "", "tool_output": {"error": "z"}}]


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_is_error_and_tool_name_agree_with_the_vocabulary(event_type):
    for output, call in itertools.product(OUTPUTS, TOOL_CALLS):
        ev = event(event_type=event_type, output_data=output, tool_call=call)
        valid, errors = check(ev)
        assert errors == []
        assert valid.row.is_error == (1 if is_error_event(event_type, output, call) else 0), ev
        name = tool_field(call, "name")
        expected = name if name is None or type(name) is str else str(name)[:256]
        assert valid.row.tool_name == expected, ev


@pytest.mark.parametrize("timestamp", [
    "2026-01-15T11:00:00.000Z", "2026-01-15T11:00:00Z", "2026-01-15T11:00:00.5Z",
    "2026-01-15T13:00:00+02:00", "2026-01-15T11:00:00.000+00:00", "2026-01-15 11:00:00",
    "2026-01-15T11:00:00.0000Z", "2026-01-15x11:00:00.000Z", "20260115", "2026-W03-4",
    "0001-01-01T00:00:00.000Z", "0001-01-01T00:30:00+01:00", "0000-01-01T00:00:00.000Z",
    "2026-02-30T00:00:00.000Z", "2026-01-15T25:00:00.000Z", "2026-01-15T11:00:00.000z",
    "2026-01-15T11:00:00,000Z", "garbage", "",
])
def test_timestamps_are_normalize_ts(timestamp):
    valid, errors = check(event(timestamp=timestamp))
    try:
        expected = normalize_ts(timestamp)
    except (ValueError, OverflowError):
        assert valid is None
        assert errors == [{"index": 0, "field": "timestamp",
                           "message": f"is not an ISO 8601 timestamp: {timestamp!r}"}]
    else:
        assert errors == []
        assert valid.row.timestamp == expected


def test_a_timestamp_beyond_the_skew_is_in_the_future():
    valid, errors = check(event(timestamp="2026-01-17T14:00:00+02:00"))
    assert valid is None
    assert errors == [{"index": 0, "field": "timestamp", "message": (
        "is more than 1 day in the future: 2026-01-17T12:00:00.000Z (server time "
        "2026-01-15T12:00:00.000Z; the accepted skew is set by OBSCTL_MAX_FUTURE_SKEW)")}]
    assert check(event(timestamp=LIMIT))[0] is not None
    assert validate_event(event(timestamp="9999-12-31T23:59:59.999Z"), 0, [], NOW, NO_LIMIT) is not None


def test_null_fields_are_fields_left_out():
    nulls = dict.fromkeys(EVENT_FIELDS)
    valid, errors = check(nulls)
    assert errors == []
    row = valid.row
    assert (row.session_id, row.event_type, row.timestamp) == ("unknown", "generic", NOW)
    assert row[4:] == (None,) * 9 + (None, None, 0, None) + (None,) * 4
    assert valid.client_id is False and valid.unknown is None


def test_an_accepted_event_is_stored_as_given():
    ev = event(event_id="e1", timestamp="2026-01-15T13:00:00+02:00", model="m", agent_name="a",
               tokens_in=0, tokens_out=MAX_TOKENS, duration_ms=2, input_data={"p": "é"},
               output_data={"error": "x"}, tool_call={"tool_name": 7}, decision_trace={},
               metadata={"deep": [1, {"y": None}]}, status="error", total_tokens_in=3,
               total_tokens_out=4, parent_id="p")
    valid, errors = check(ev)
    assert errors == []
    assert type(valid.row) is EventRow
    assert tuple(valid.row) == (
        "e1", "s1", "llm_call", "2026-01-15T11:00:00.000Z", "m", 0, MAX_TOKENS, 2,
        '{"p":"é"}', '{"error":"x"}', '{"tool_name":7}', "{}", '{"deep":[1,{"y":null}]}', "a", "7", 1, "p",
        None, None, None, call_key("7", {"tool_name": 7}))
    assert type(valid.row.duration_ms) is int
    assert tuple(valid)[1:] == (True, "error", 3, 4, None, None)


@pytest.mark.parametrize(("fields", "field", "message"), [
    ({"tokens_in": True}, "tokens_in", "must be a non-negative integer, got boolean"),
    ({"tokens_out": 2.0}, "tokens_out", "must be a non-negative integer, got 2.0"),
    ({"total_tokens_in": BIG}, "total_tokens_in", f"must be at most {MAX_TOKENS}, got {BIG}"),
    ({"duration_ms": True}, "duration_ms", "must be a non-negative number, got boolean"),
    ({"duration_ms": float("nan")}, "duration_ms", "must be a non-negative number, got nan"),
    ({"duration_ms": float("inf")}, "duration_ms",
     "must be at most 10^15 milliseconds (about 31,700 years), got inf"),
    ({"duration_ms": -float("inf")}, "duration_ms", "must be a non-negative number, got -inf"),
    ({"duration_ms": BIG}, "duration_ms", f"must be at most 10^15 milliseconds (about 31,700 years), got {BIG}"),
    ({"metadata": {"n": BIG}}, "metadata", "cannot be stored as JSON: Integer exceeds 64-bit range"),
    ({"tool_call": "call"}, "tool_call", "must be a JSON object or null, got string"),
    ({"input_data": [1]}, "input_data", "must be a JSON object or null, got array"),
    ({"session_id": False}, "session_id", "must be a string, got boolean"),
    ({"event_id": ""}, "event_id", "must not be empty"),
    ({"model": "m" * 257}, "model", "must be at most 256 characters (got 257)"),
    ({"status": 1}, "status", "must be a string, got integer"),
    ({"parent_id": 3}, "parent_id", "must be a string, got integer"),
    ({"timestamp": 5}, "timestamp", "must be an ISO 8601 string, got integer"),
])
def test_one_bad_field_is_one_error(fields, field, message):
    valid, errors = check(event(**fields))
    assert valid is None
    assert errors == [{"index": 0, "field": field, "message": message}]


def test_every_problem_of_an_event_is_listed_in_field_order():
    ev = {"event_type": 5, "session_id": "", "tokens_in": -1, "duration_ms": "5",
          "input_data": "x", "output_data": {"n": BIG}, "parent_id": 1, "evnt": 1}
    valid, errors = check(ev, strict=True)
    assert valid is None
    assert [e["field"] for e in errors] == ["evnt", "event_type", "session_id", "tokens_in",
                                            "duration_ms", "input_data", "output_data", "parent_id"]
    assert errors[0]["message"] == "is not an event field"


@pytest.mark.parametrize("ev", [[], "x", 5, None, True, [{}]])
def test_what_is_not_an_object_is_not_an_event(ev):
    valid, errors = check(ev)
    assert valid is None and len(errors) == 1 and errors[0]["field"] is None
    assert errors[0]["message"].startswith("event must be a JSON object, got ")


def test_objects_that_are_not_events():
    assert check({})[1][0]["message"].startswith("is empty")
    assert check({"foo": 1})[1][0]["message"].startswith("is not an event")
    assert check({"events": [], "x": 1})[1][0]["message"].startswith('has an "events" array')
    assert check({"resourceSpans": [], "session_id": "s"})[1][0]["message"].startswith(
        "is an OTLP export request")


def test_unknown_fields_are_kept_for_the_warning_or_refused_when_strict():
    ev = event(evnt_type="x", extra=None)
    valid, errors = check(ev)
    assert errors == [] and valid.unknown == {"evnt_type", "extra"}
    valid, errors = check(ev, strict=True)
    assert valid is None and [e["field"] for e in errors] == ["evnt_type", "extra"]
    assert errors[0]["message"] == "is not an event field (did you mean event_type?)"
    unknown = UnknownFields()
    valid, errors = validate_events([ev, event(), event(extra=1)], unknown=unknown)
    assert len(valid) == 3 and errors == []
    assert (unknown.events, unknown.counts) == (2, {"evnt_type": 1, "extra": 2})


def test_the_demo_events_all_pass_and_encode_as_orjson_does():
    from pathlib import Path

    demo = Path(__file__).resolve().parents[3] / "examples" / "demo-events.jsonl"
    events = [orjson.loads(line) for line in demo.read_bytes().splitlines() if line.strip()]
    valid, errors = validate_events(events, max_future=None)
    assert errors == [] and len(valid) == len(events)
    for ev, v in zip(events, valid):
        for name in ("input_data", "output_data", "tool_call", "decision_trace", "metadata"):
            value = ev.get(name)
            assert getattr(v.row, name) == (orjson.dumps(value).decode() if value is not None else None)


def test_a_nul_character_in_a_name_is_refused_on_every_store(client):
    r = client.post("/events", json={"events": [
        {"session_id": "ok", "event_type": "llm_call"},
        {"session_id": "bad\u0000id", "event_type": "llm_call"},
        {"session_id": "ok", "event_type": "tool_call", "tool_call": {"name": "se\u0000arch"}},
    ]})
    assert r.status_code == 400
    details = r.get_json()["details"]
    assert [(d["index"], d["field"]) for d in details] == [(1, "session_id"), (2, "tool_call.name")]
    assert "NUL" in details[0]["message"]
    # Inside the objects, NUL is JSON text (\u0000) and is stored as sent.
    r = client.post("/events", json={"events": [{"session_id": "ok", "input_data": {"p": "a\u0000b"}}]})
    assert r.status_code == 200
    assert client.get("/sessions/ok/export").get_json()["events"][0]["input_data"] == {"p": "a\u0000b"}
