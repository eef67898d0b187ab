"""Ingest never loses or invents events: input shapes, format detection, unknown fields,
encodings, future timestamps and type checks, through the CLI, the HTTP API and OTLP."""

import json
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from obsctl.config import Settings, parse_future_skew
from obsctl.errors import InvalidInput
from obsctl.services.ingest import UnknownFields, ingest_events
from obsctl.timeutil import format_ts
from tests.otlp_support import request, span
from tests.store_support import open_any


def rows(db_url) -> list[tuple]:
    db = open_any(db_url)
    try:
        return db.conn.execute("SELECT session_id, event_type, tokens_in FROM events ORDER BY id").fetchall()
    finally:
        db.close()


def sessions(db_url) -> list[str]:
    db = open_any(db_url)
    try:
        return [r[0] for r in db.conn.execute("SELECT session_id FROM sessions ORDER BY session_id")]
    finally:
        db.close()


def lines(*events) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def in_hours(hours: float) -> str:
    return format_ts(datetime.now(UTC) + timedelta(hours=hours))


# --- file shapes -------------------------------------------------------------------------

def test_pretty_printed_single_event_is_ingested(cli, tmp_path, db_url):
    # What `python -m json.tool` writes for one event: it used to read as an empty wrapper.
    path = tmp_path / "pp.json"
    path.write_text(json.dumps({"session_id": "s1", "event_type": "llm_call", "tokens_in": 5}, indent=4))
    result = cli("ingest", str(path))
    assert result.exit_code == 0, result.stderr
    assert "ingested 1 event into 1 session (1 new, 0 duplicates, 0 rejected)" in result.stderr
    assert rows(db_url) == [("s1", "llm_call", 5)]


def test_pretty_printed_single_event_with_nested_objects(cli, tmp_path, db_url):
    path = tmp_path / "pp.json"
    path.write_text(json.dumps({"session_id": "s1", "input_data": {"messages": [{"role": "user"}]},
                                "tool_call": {"name": "search", "input": {"q": [1, 2.5]}}}, indent=2))
    assert cli("ingest", "--json", str(path)).exit_code == 0
    db = open_any(db_url)
    (input_data, tool_call), = db.conn.execute("SELECT input_data, tool_call FROM events").fetchall()
    db.close()
    assert json.loads(input_data) == {"messages": [{"role": "user"}]}
    assert json.loads(tool_call) == {"name": "search", "input": {"q": [1, 2.5]}}


@pytest.mark.parametrize("text,message", [
    ('{"evnts": [{"session_id": "typo"}]}\n', "is not an event: none of its keys (evnts)"),
    (json.dumps({"evnts": [{"session_id": "typo"}]}, indent=2), "is not an event: none of its keys (evnts)"),
    ('{"events": [{"session_id": "real"}], "extra": 1}\n',
     'has an "events" array next to other keys (extra)'),
    (json.dumps({"extra": 1, "events": [{"session_id": "real"}]}, indent=2),
     'unknown top-level keys next to "events": extra'),
    ("{}\n", "the object is empty"),
    ('{"sesion_id": "x"}\n', "did you mean session_id?"),
    ("5\n", "event must be a JSON object, got integer"),
    ('"text"', "event must be a JSON object, got string"),
    ("true", "event must be a JSON object, got boolean"),
])
def test_input_that_is_not_events_is_an_error_and_invents_nothing(cli, tmp_path, db_url, text, message):
    path = tmp_path / "input.json"
    path.write_text(text)
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert message in result.stderr
    assert "1 rejected" in result.stderr
    assert rows(db_url) == [] and sessions(db_url) == []


def test_an_array_item_that_is_not_an_object_is_rejected_and_the_others_stored(cli, tmp_path, db_url):
    path = tmp_path / "input.json"
    path.write_text('[1, {"session_id": "real"}]')
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert f"{path}:1: rejected: event must be a JSON object, got integer" in result.stderr
    assert sessions(db_url) == ["real"]


def test_wrapper_with_a_key_after_a_streamed_events_array(cli, tmp_path, db_url):
    # The events are streamed before the key is seen: they are stored, and the key is an error.
    path = tmp_path / "wrapped.json"
    path.write_text(json.dumps({"events": [{"session_id": "a"}, {"session_id": "b"}], "next_page": 2}, indent=2))
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert f"{path}:3: rejected: unknown top-level keys after the \"events\" array: next_page" in result.stderr
    assert sessions(db_url) == ["a", "b"]
    assert cli("ingest", "--strict", str(path)).exit_code == 1


def test_a_malformed_first_line_does_not_swallow_the_rest_of_the_file(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text('{"session_id": "a", oops}\n' + lines({"session_id": "b"}, {"session_id": "c"}))
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert f"{path}:1: rejected: malformed JSON at column 21: unexpected character" in result.stderr
    assert sessions(db_url) == ["b", "c"]


def test_a_truncated_line_names_the_column_where_it_ends(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a"}) + '{"a": 1\n' + lines({"session_id": "b"}))
    result = cli("ingest", str(path))
    assert f"{path}:2: rejected: malformed JSON at column 8: unexpected end of data" in result.stderr
    # Cut short on the first line, it is one bad line too, not the start of a document.
    path.write_text('{"session_id": "c", "tokens_in": 1\n' + lines({"session_id": "d"}))
    result = cli("ingest", str(path))
    assert f"{path}:1: rejected: malformed JSON at column 35: unexpected end of data" in result.stderr
    assert sessions(db_url) == ["a", "b", "d"]


# --- OTLP detection ----------------------------------------------------------------------

def otlp_document(session: str = "otlp-1") -> dict:
    return request(span("00000000000000a1", attrs={"session.id": session, "gen_ai.usage.input_tokens": 4}))


@pytest.mark.parametrize("pretty", [False, True])
def test_otlp_json_is_detected_by_content(cli, tmp_path, db_url, pretty):
    path = tmp_path / "traces.json"
    option = orjson.OPT_INDENT_2 if pretty else 0
    path.write_bytes(orjson.dumps(otlp_document(), option=option) + b"\n")
    result = cli("ingest", "--json", str(path))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["stored"] == 1
    assert sessions(db_url) == ["otlp-1"]
    assert rows(db_url) == [("otlp-1", "generic", 4)]


@pytest.mark.parametrize("pretty", [False, True])
def test_otlp_format_on_an_events_file_is_an_error(cli, tmp_path, db_url, pretty):
    path = tmp_path / "events.json"
    path.write_text(json.dumps([{"session_id": "a"}], indent=2) if pretty else lines({"session_id": "a"}))
    result = cli("ingest", "--format", "otlp-json", str(path))
    assert result.exit_code == 1
    assert f"Error: {path} holds obsctl events, not OTLP JSON" in result.stderr
    assert rows(db_url) == []


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_events_format_on_an_otlp_file_is_an_error(cli, tmp_path, db_url, fmt):
    path = tmp_path / "traces.json"
    path.write_bytes(orjson.dumps(otlp_document()) + b"\n")
    result = cli("ingest", "--format", fmt, str(path))
    assert result.exit_code == 1
    assert "is OTLP JSON (it has resourceSpans)" in result.stderr
    assert rows(db_url) == [] and sessions(db_url) == []


def test_otlp_lines_that_are_not_export_requests_are_rejected(cli, tmp_path, db_url):
    path = tmp_path / "traces.jsonl"
    path.write_bytes(orjson.dumps(otlp_document()) + b"\n" + b'{"session_id": "a"}\n{}\n')
    result = cli("ingest", "--format", "otlp-json", str(path))
    assert result.exit_code == 1
    assert f"{path}:2: rejected: not an OTLP export request" in result.stderr
    assert f"{path}:3: rejected: not an OTLP export request" in result.stderr
    assert sessions(db_url) == ["otlp-1"]


def test_otlp_document_without_resource_spans_is_rejected(cli, tmp_path, db_url):
    path = tmp_path / "traces.json"
    path.write_text(json.dumps({"resource_spans": []}, indent=2))
    result = cli("ingest", "--format", "otlp-json", str(path))
    assert result.exit_code == 1
    assert "not an OTLP export request" in result.stderr


def test_otlp_file_with_a_byte_order_mark(cli, tmp_path, db_url):
    path = tmp_path / "traces.json"
    path.write_bytes(b"\xef\xbb\xbf" + orjson.dumps(otlp_document(), option=orjson.OPT_INDENT_2))
    result = cli("ingest", str(path))
    assert result.exit_code == 0, result.stderr
    assert sessions(db_url) == ["otlp-1"]


# --- unknown fields ----------------------------------------------------------------------

def test_unknown_fields_are_accepted_counted_and_reported(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a", "evnt_type": "llm_call"}, {"session_id": "a", "evnt_type": "x"},
                          {"session_id": "a", "evnt_type": "x", "colour": 1}, {"session_id": "a"}))
    result = cli("ingest", str(path))
    assert result.exit_code == 0
    assert result.stderr.splitlines()[-1] == "warning: 3 events had unknown fields: evnt_type (3), colour (1)"
    assert len(rows(db_url)) == 4

    again = cli("ingest", "--json", str(path))
    assert json.loads(again.stdout)["warnings"] == [{
        "code": "unknown_fields",
        "message": "3 events had unknown fields: evnt_type (3), colour (1)",
        "events": 3,
        "fields": {"evnt_type": 3, "colour": 1},
    }]


def test_no_warnings_key_when_every_field_is_known(cli, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a", "parent_id": "p", "status": "x", "total_tokens_in": 1}))
    result = cli("ingest", "--json", str(path))
    assert "warnings" not in json.loads(result.stdout)
    assert "warning" not in result.stderr


def test_strict_rejects_unknown_fields_with_line_and_field(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a"}, {"session_id": "a", "evnt_type": "x", "zz": 1}))
    result = cli("ingest", "--strict", str(path))
    assert result.exit_code == 1
    assert (f"{path}:2: rejected: evnt_type is not an event field (did you mean event_type?); "
            f"zz is not an event field") in result.stderr
    assert rows(db_url) == []


def test_unknown_field_names_are_sorted_by_count_then_name_and_capped():
    unknown = UnknownFields()
    for i in range(12):
        unknown.add([f"f{i:02d}"] * 1)
    unknown.add(["f11"])
    unknown.add(["long" * 40, "new\nline"])
    (warning,) = unknown.warnings()
    assert warning["events"] == 14
    assert warning["message"].startswith("14 events had unknown fields: f11 (2), f00 (1), f01 (1), ")
    assert warning["message"].endswith(" and 4 other fields")
    assert list(warning["fields"]) == ["f11", "f00", "f01", "f02", "f03", "f04", "f05", "f06", "f07", "f08"]
    assert UnknownFields().warnings() == []
    long_name = UnknownFields()
    long_name.add(["long" * 40, "new\nline"])
    assert long_name.warnings()[0]["message"] == (
        f"1 event had unknown fields: {('long' * 40)[:63]}… (1), new\\nline (1)")


def test_http_response_carries_the_warnings(client):
    body = {"events": [{"session_id": "h", "evnt_type": "x"}, {"session_id": "h", "evnt_type": "y"}]}
    response = client.post("/events", json=body)
    assert response.status_code == 200
    assert response.get_json() == {
        "status": "ok", "processed": 2, "duplicates": 0,
        "warnings": [{"code": "unknown_fields", "message": "2 events had unknown fields: evnt_type (2)",
                      "events": 2, "fields": {"evnt_type": 2}}],
    }
    plain = client.post("/events", json={"events": [{"session_id": "h"}]})
    assert plain.get_json() == {"status": "ok", "processed": 1, "duplicates": 0}


def test_warnings_are_in_the_openapi_document(client):
    doc = client.get("/openapi.json").get_json()

    def resolved(schema: dict) -> dict:  # the document names its models by $ref
        while "$ref" in schema:
            schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        return schema

    operation = doc["paths"]["/events"]["post"]
    ok = resolved(operation["responses"]["200"]["content"]["application/json"]["schema"])
    warning = resolved(ok["properties"]["warnings"]["items"])
    assert warning["properties"]["code"]["enum"] == ["unknown_fields"]
    assert "warnings" not in ok["required"]
    body = resolved(operation["requestBody"]["content"]["application/json"]["schema"])
    assert body["additionalProperties"] is False
    assert "parent_id" in doc["components"]["schemas"]["EventInput"]["properties"]


@pytest.mark.parametrize("body,message", [
    ({"events": [{"session_id": "x"}], "extra": 1}, 'unknown top-level keys next to "events": extra'),
    ({"evnts": [{"session_id": "x"}]}, "(got keys: evnts)"),
])
def test_http_body_with_unknown_top_level_keys_is_400(client, body, message):
    response = client.post("/events", json=body)
    assert response.status_code == 400
    assert message in response.get_json()["error"]
    assert client.get("/sessions").get_json()["total"] == 0


@pytest.mark.parametrize("event,message", [
    ({"evnts": 1}, "events[0] is not an event"),
    ({}, "events[0] is empty"),
    ({"events": [], "session_id": "x"}, 'events[0] has an "events" array next to other keys'),
    ({"resourceSpans": []}, "events[0] is an OTLP export request"),
])
def test_http_objects_that_are_not_events_are_400(client, event, message):
    response = client.post("/events", json={"events": [event]})
    assert response.status_code == 400
    assert message in response.get_json()["error"]
    assert client.get("/sessions").get_json()["total"] == 0


# --- encodings ---------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    b'\xef\xbb\xbf{"session_id": "a"}\n{"session_id": "b"}\n',
    b'\xef\xbb\xbf[{"session_id": "a"}, {"session_id": "b"}]',
    b'\xef\xbb\xbf{\n  "events": [{"session_id": "a"}, {"session_id": "b"}]\n}',
    b'{"session_id": "a"}\n\xef\xbb\xbf{"session_id": "b"}\n',  # two files joined with cat
])
def test_a_byte_order_mark_is_accepted(cli, tmp_path, db_url, data):
    path = tmp_path / "events.jsonl"
    path.write_bytes(data)
    result = cli("ingest", str(path))
    assert result.exit_code == 0, result.stderr
    assert sessions(db_url) == ["a", "b"]


def test_bytes_that_are_not_utf8_are_named_with_their_line(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"session_id": "\xff"}\n{"session_id": "ok"}\n{"session_id": "caf\xe9"}\n')
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert f"{path}:1: rejected: not UTF-8 text (byte 0xff at column 17)" in result.stderr
    assert f"{path}:3: rejected: not UTF-8 text (byte 0xe9 at column 20)" in result.stderr
    assert "b'" not in result.stderr and "\\x" not in result.stderr
    assert sessions(db_url) == ["ok"]


def test_bytes_that_are_not_utf8_in_a_document(cli, tmp_path, db_url):
    path = tmp_path / "events.json"
    path.write_bytes(b'[\n{"session_id": "a"},\n{"session_id": "\xff"}\n]\n')
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert f"{path}:2: rejected: line 3: not UTF-8 text (after item 1)" in result.stderr
    assert "b'" not in result.stderr
    assert sessions(db_url) == ["a"]


def test_malformed_document_message_is_text(cli, tmp_path):
    path = tmp_path / "events.json"
    path.write_bytes(b'[{"session_id": "a"}, {"session_id" "b"}]')
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert (f"{path}:2: rejected: malformed JSON document after item 1: parse error: object key and "
            f"value must be separated by a colon") in result.stderr
    assert "b'" not in result.stderr


# --- timestamps in the future ------------------------------------------------------------

def test_far_future_timestamp_is_rejected_by_default(cli, client, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "f", "timestamp": "9999-01-01T00:00:00Z"},
                          {"session_id": "f", "timestamp": in_hours(23)}))
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert (f"{path}:1: rejected: timestamp is more than 1 day in the future: 9999-01-01T00:00:00.000Z"
            in result.stderr)
    assert "OBSCTL_MAX_FUTURE_SKEW" in result.stderr
    assert len(rows(db_url)) == 1

    response = client.post("/events", json={"events": [{"session_id": "g", "timestamp": in_hours(25)}]})
    assert response.status_code == 400
    assert response.get_json()["details"][0]["field"] == "timestamp"


def test_future_skew_is_configurable(cli, make_app, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a", "timestamp": in_hours(5)}, {"session_id": "b", "timestamp": in_hours(7)}))
    result = cli("ingest", str(path), env={"OBSCTL_MAX_FUTURE_SKEW": "6h"})
    assert result.exit_code == 1 and "more than 6 hours in the future" in result.stderr
    assert sessions(db_url) == ["a"]
    assert cli("ingest", str(path), env={"OBSCTL_MAX_FUTURE_SKEW": "off"}).exit_code == 0
    assert sessions(db_url) == ["a", "b"]

    strict = make_app({"OBSCTL_MAX_FUTURE_SKEW": "0"}).test_client()
    response = strict.post("/events", json={"events": [{"session_id": "c", "timestamp": in_hours(0.1)}]})
    assert response.status_code == 400 and "is in the future" in response.get_json()["error"]
    assert strict.post("/events", json={"events": [{"session_id": "c"}]}).status_code == 200


def test_future_span_is_rejected_over_otlp(client):
    start = int((datetime.now(UTC) + timedelta(days=3)).timestamp()) * 1_000_000_000
    document = request(span("00000000000000a1", start=start, attrs={"session.id": "later"}),
                       span("00000000000000b1", attrs={"session.id": "now"}))
    response = client.post("/v1/traces", data=orjson.dumps(document), content_type="application/json")
    assert response.status_code == 200
    body = response.get_json()
    assert body["partialSuccess"]["rejectedSpans"] == "1"
    assert "timestamp is more than 1 day in the future" in body["partialSuccess"]["errorMessage"]
    assert client.get("/sessions").get_json()["total"] == 1


def test_future_span_is_rejected_from_an_otlp_file(cli, tmp_path, db_url):
    start = int((datetime.now(UTC) + timedelta(days=3)).timestamp()) * 1_000_000_000
    path = tmp_path / "traces.jsonl"
    path.write_bytes(orjson.dumps(request(span("00000000000000a1", start=start))) + b"\n")
    result = cli("ingest", str(path))
    assert result.exit_code == 1 and "in the future" in result.stderr
    assert rows(db_url) == []


@pytest.mark.parametrize("text,expected", [
    (None, timedelta(days=1)), ("", timedelta(days=1)), ("90", timedelta(seconds=90)),
    ("90s", timedelta(seconds=90)), ("30m", timedelta(minutes=30)), ("6h", timedelta(hours=6)),
    (" 2D ", timedelta(days=2)), ("1w", timedelta(weeks=1)), ("0", timedelta(0)), ("off", None),
    ("OFF", None),
])
def test_future_skew_values(text, expected):
    assert parse_future_skew(text) == expected
    env = {} if text is None else {"OBSCTL_MAX_FUTURE_SKEW": text}
    assert Settings.from_env(env, db_url="x.db").max_future_skew == expected


@pytest.mark.parametrize("text", ["-1h", "1.5h", "1y", "soon", "1_0", "99999999999", "36501d"])
def test_bad_future_skew_values(text):
    with pytest.raises(InvalidInput) as info:
        parse_future_skew(text)
    assert "OBSCTL_MAX_FUTURE_SKEW" in info.value.message


def test_bad_future_skew_is_a_clear_cli_error(cli):
    result = cli("sessions", "list", env={"OBSCTL_MAX_FUTURE_SKEW": "tomorrow"})
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: OBSCTL_MAX_FUTURE_SKEW must look like 1d, 6h")


# --- types and messages ------------------------------------------------------------------

def test_non_string_parent_id_is_rejected(client, cli, tmp_path, db_url):
    response = client.post("/events", json={"events": [{"session_id": "p", "parent_id": 5}]})
    assert response.status_code == 400
    assert response.get_json()["details"] == [
        {"index": 0, "field": "parent_id", "message": "must be a string, got integer"}]
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "p", "parent_id": ["x"]}, {"session_id": "p", "parent_id": "e1"}))
    result = cli("ingest", str(path))
    assert result.exit_code == 1 and "parent_id must be a string, got array" in result.stderr
    db = open_any(db_url)
    assert db.conn.execute("SELECT parent_id FROM events").fetchall() == [("e1",)]
    db.close()


@pytest.mark.parametrize("field,value,message", [
    ("tokens_in", 1e30, "must be a non-negative integer of at most 1099511627776, got 1e+30"),
    ("tokens_out", 2.5, "must be a non-negative integer, got 2.5"),
    ("total_tokens_in", 3.0, "must be a non-negative integer, got 3.0"),
    ("duration_ms", 1e308, "must be at most 10^15 milliseconds (about 31,700 years), got 1e+308"),
    ("duration_ms", -1, "must be a non-negative number, got -1"),
])
def test_number_messages_name_the_value(db, field, value, message):
    event = {"session_id": "n", "event_type": "session_end", field: value}
    with pytest.raises(InvalidInput) as info:
        ingest_events(db, [event])
    assert info.value.details == [{"index": 0, "field": field, "message": message}]


@pytest.mark.parametrize("field,value,message", [
    ("status", [], "must be a string, got array"),
    ("total_tokens_in", -1, "must be a non-negative integer, got -1"),
    ("total_tokens_out", "12", "must be a non-negative integer, got string"),
])
def test_session_end_fields_are_type_checked_on_every_event(client, field, value, message):
    # Only session_end reads them, but a wrong type is as wrong on an llm_call.
    response = client.post("/events", json={"events": [{"session_id": "t", "event_type": "llm_call",
                                                        field: value}]})
    assert response.status_code == 400
    assert response.get_json()["details"] == [{"index": 0, "field": field, "message": message}]
