"""`obsctl ingest --format otlp-json FILE`: collector file-exporter output and single documents."""

import orjson

from obsctl.config import Settings
from obsctl.web.app import create_app
from tests.otlp_support import OTHER_TRACE, TRACE, request, span


def summary(result) -> dict:
    return orjson.loads(result.stdout)


def test_pretty_printed_document(cli, client, tmp_path):
    path = tmp_path / "traces.json"
    document = request(span("00000000000000a1", attrs={"session.id": "doc-1", "gen_ai.request.model": "m",
                                                       "gen_ai.usage.input_tokens": 9}),
                       span("00000000000000b1", parent="00000000000000a1"))
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    result = cli("ingest", "--format", "otlp-json", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    assert summary(result) == {"events": 2, "stored": 2, "duplicates": 0, "rejected": 0, "sessions": 1}
    session = client.get("/sessions/doc-1").get_json()
    assert (session["event_count"], session["total_tokens_in"]) == (2, 9)


def test_collector_file_exporter_json_lines(cli, client, tmp_path):
    # The file exporter writes one export request per line; a trace can span several lines.
    first = request(span("00000000000000a1", attrs={"gen_ai.conversation.id": "conv-5"}))
    second = request(span("00000000000000b1", parent="00000000000000a1"),
                     span("00000000000000c1", trace=OTHER_TRACE))
    path = tmp_path / "traces.jsonl"
    path.write_bytes(orjson.dumps(first) + b"\n\n" + orjson.dumps(second) + b"\n")
    result = cli("ingest", "-f", "otlp-json", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    assert summary(result) == {"events": 3, "stored": 3, "duplicates": 0, "rejected": 0, "sessions": 2}
    assert client.get("/sessions/conv-5").get_json()["event_count"] == 2
    again = cli("ingest", "-f", "otlp-json", str(path), "--json")
    assert summary(again) == {"events": 3, "stored": 0, "duplicates": 3, "rejected": 0, "sessions": 2}


def test_rejected_spans_and_lines_are_reported_with_their_line(cli, client, tmp_path):
    good = request(span("00000000000000a1"))
    bad = request(span("00000000000000b1", attrs={"gen_ai.usage.output_tokens": -2}))
    path = tmp_path / "traces.jsonl"
    path.write_bytes(orjson.dumps(good) + b"\n" + orjson.dumps(bad) + b"\n{oops\n")
    result = cli("ingest", "--format", "otlp-json", str(path))
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (f"Error: {path}:2: rejected: span {TRACE}:00000000000000b1: "
                        f"tokens_out must be a non-negative integer, got -2")
    assert lines[1].startswith(f"Error: {path}:3: rejected: malformed JSON")
    assert lines[2] == "ingested 1 event into 1 session (1 new, 0 duplicates, 2 rejected)"
    assert client.get(f"/sessions/{TRACE}").get_json()["event_count"] == 1


def test_structural_error_in_a_document_element(cli, tmp_path):
    document = request(span("00000000000000a1"))
    document["resourceSpans"].append({"scopeSpans": 7})
    path = tmp_path / "traces.json"
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    result = cli("ingest", "--format", "otlp-json", str(path), "--json")
    assert result.exit_code == 1
    assert f"{path}:2: rejected: resourceSpans[1].scopeSpans must be an array" in result.stderr
    assert summary(result)["stored"] == 1


def test_strict_stores_nothing_when_anything_is_rejected(cli, client, tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_bytes(orjson.dumps(request(span("00000000000000a1"))) + b"\n"
                     + orjson.dumps(request(span("00000000000000b1", trace="0" * 32))) + b"\n")
    result = cli("ingest", "--format", "otlp-json", "--strict", str(path))
    assert result.exit_code == 1
    assert "--strict: nothing was stored" in result.stderr
    assert client.get("/sessions").get_json()["total"] == 0


def test_cli_and_http_store_the_same_session(cli, client, tmp_path):
    document = request(
        span("00000000000000a1", attrs={"session.id": "same", "gen_ai.operation.name": "invoke_agent",
                                        "gen_ai.agent.name": "bot"}),
        span("00000000000000b1", parent="00000000000000a1", status={"code": 2, "message": "x"},
             attrs={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 4}))
    path = tmp_path / "traces.json"
    path.write_bytes(orjson.dumps(document))
    assert cli("ingest", "--format", "otlp-json", str(path)).exit_code == 0
    via_cli = client.get("/sessions/same").get_json()

    other = create_app(Settings.from_env({}, db_path=tmp_path / "other.db"))
    try:
        other_client = other.test_client()
        response = other_client.post("/v1/traces", data=orjson.dumps(document),
                                     content_type="application/json")
        assert response.status_code == 200
        via_http = other_client.get("/sessions/same").get_json()
    finally:
        other.extensions["obsctl"].store.close()
    assert via_cli == via_http
    assert (via_cli["agent_name"], via_cli["error_count"]) == ("bot", 1)


def test_help_and_format_names(cli):
    assert "otlp-json" in cli("ingest", "--help").stdout
    result = cli("ingest", "--format", "otlp", "x.json")
    assert result.exit_code == 2
    assert ("Invalid value for '--format' / '-f': format must be one of auto, jsonl, json, otlp-json; "
            "got 'otlp'") in result.stderr
