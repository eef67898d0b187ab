"""POST /v1/traces over the real Flask app: encodings, limits, errors and the response."""

import gzip
import zlib

import orjson
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tests.otlp_support import OTHER_TRACE, T0, T0_ISO, TRACE, request, span, to_protobuf

PROTOBUF = "application/x-protobuf"


def post(client, body: bytes, content_type: str, **headers):
    return client.post("/v1/traces", data=body, headers={"Content-Type": content_type, **headers})


def llm_request(**attrs):
    return request(span("00f067aa0ba902b7", attrs={
        "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3, "session.id": "s-api", **attrs}))


def test_protobuf_request_is_stored_and_answered_in_protobuf(client):
    response = post(client, to_protobuf(llm_request()), PROTOBUF)
    assert response.status_code == 200
    assert response.mimetype == PROTOBUF
    assert response.data == b""  # an ExportTraceServiceResponse with nothing set
    session = client.get("/sessions/s-api").get_json()
    assert (session["total_tokens_in"], session["total_tokens_out"], session["started_at"]) == (
        12, 3, T0_ISO)
    assert session["events"][0]["event_id"] == f"{TRACE}:00f067aa0ba902b7"


def test_json_with_hex_ids_and_string_int64(client):
    document = llm_request()
    assert document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] == str(T0)
    response = post(client, orjson.dumps(document), "application/json")
    assert (response.status_code, response.mimetype, response.get_json()) == (200, "application/json", {})
    assert client.get("/sessions/s-api").get_json()["events"][0]["model"] == "gpt-4o"


def test_json_with_numbers_unknown_fields_and_enum_names(client):
    document = llm_request()
    s = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    s.update(startTimeUnixNano=T0, endTimeUnixNano=T0 + 2_000_000, kind="SPAN_KIND_CLIENT",
             droppedAttributesCount=0, someFutureField={"x": 1})
    s["attributes"].append({"key": "gen_ai.usage.input_tokens", "value": {"intValue": 12}})
    document["resourceSpans"][0]["schemaUrl"] = "https://opentelemetry.io/schemas/1.26.0"
    document["futureTopLevel"] = True
    assert post(client, orjson.dumps(document), "application/json; charset=utf-8").status_code == 200
    event = client.get("/sessions/s-api").get_json()["events"][0]
    assert (event["timestamp"], event["duration_ms"], event["metadata"]["span_kind"]) == (
        T0_ISO, 2, "client")


def test_gzip_bodies_are_decompressed(client):
    response = post(client, gzip.compress(to_protobuf(llm_request())), PROTOBUF, **{"Content-Encoding": "gzip"})
    assert response.status_code == 200
    response = post(client, zlib.compress(orjson.dumps(request(span("00000000000000b1", trace=OTHER_TRACE)))),
                    "application/json", **{"Content-Encoding": "deflate"})
    assert response.status_code == 200
    assert client.get("/sessions").get_json()["total"] == 2


def test_size_limit_applies_after_decompression(make_app):
    client = make_app({"OBSCTL_MAX_BODY_BYTES": "100000"}).test_client()
    bomb = gzip.compress(b"\x00" * 50_000_000)  # 50 MB of zeros in about 50 KB
    assert len(bomb) < 100_000
    response = post(client, bomb, PROTOBUF, **{"Content-Encoding": "gzip"})
    assert response.status_code == 413
    assert response.get_json() == {
        "error": "request body too large after decompression; the limit is 100000 bytes"}


def test_compressed_body_over_the_limit_is_413(make_app):
    client = make_app({"OBSCTL_MAX_BODY_BYTES": "1000"}).test_client()
    response = post(client, b"\x00" * 2000, PROTOBUF)
    assert response.status_code == 413


def test_truncated_and_corrupt_gzip_are_400(client):
    body = gzip.compress(to_protobuf(llm_request()))
    response = post(client, body[:-10], PROTOBUF, **{"Content-Encoding": "gzip"})
    assert (response.status_code, response.get_json()) == (400, {"error": "truncated gzip body"})
    response = post(client, b"not gzip at all", PROTOBUF, **{"Content-Encoding": "gzip"})
    assert response.status_code == 400
    assert response.get_json()["error"].startswith("cannot decompress the gzip body")


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", ""])
def test_other_content_types_are_415(client, content_type):
    response = client.post("/v1/traces", data=b"{}", headers={"Content-Type": content_type} if content_type else {})
    assert response.status_code == 415
    assert response.get_json()["error"].startswith("unsupported Content-Type")


def test_unsupported_content_encoding_is_415(client):
    response = post(client, b"...", PROTOBUF, **{"Content-Encoding": "br"})
    assert (response.status_code, response.get_json()) == (
        415, {"error": "unsupported Content-Encoding 'br'; send gzip, deflate or identity"})


def test_garbage_protobuf_is_400(client):
    response = post(client, b"\xff\xff\xff\xff garbage", PROTOBUF)
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(
        "cannot decode the protobuf body as an ExportTraceServiceRequest")


@pytest.mark.parametrize("body, message", [
    (b"{not json", None),
    (b"", None),
    (b"[]", 'an OTLP JSON request must be an object: {"resourceSpans": [...]}'),
    (b'{"resourceSpans": {}}', "resourceSpans must be an array"),
    (b'{"resourceSpans": [1]}', "resourceSpans[0] must be an object"),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]}', "resourceSpans[0].scopeSpans[0].spans must be an array"),
    (b'{"resourceSpans": [{"resource": {"attributes": [{"value": {}}]}}]}',
     "resourceSpans[0].resource.attributes[0] must be an object with a string key"),
])
def test_undecodable_json_is_400(client, body, message):
    response = post(client, body, "application/json")
    assert response.status_code == 400
    if message:
        assert response.get_json() == {"error": message}
    else:
        assert response.get_json()["error"].startswith("malformed JSON in request body")


@pytest.mark.parametrize("body, content_type", [
    (b"", PROTOBUF), (b"{}", "application/json"), (b'{"resourceSpans": []}', "application/json")])
def test_empty_request_is_a_success(client, body, content_type):
    assert post(client, body, content_type).status_code == 200
    assert client.get("/sessions").get_json()["total"] == 0


def test_partial_success_in_json(client):
    document = request(span("00000000000000a1", attrs={"gen_ai.usage.input_tokens": -1}),
                       span("00000000000000b1"))
    response = post(client, orjson.dumps(document), "application/json")
    assert response.status_code == 200
    assert response.get_json() == {"partialSuccess": {
        "rejectedSpans": "1",
        "errorMessage": f"1 span rejected: {TRACE}:00000000000000a1: "
                        f"tokens_in must be a non-negative integer, got -1"}}
    assert client.get(f"/sessions/{TRACE}").get_json()["event_count"] == 1


def test_partial_success_in_protobuf(client):
    document = request(span("00000000000000a1"), span("00000000000000b1", trace="0" * 32))
    response = post(client, to_protobuf(document), PROTOBUF)
    assert response.status_code == 200
    parsed = ExportTraceServiceResponse.FromString(response.data)
    assert parsed.partial_success.rejected_spans == 1
    assert parsed.partial_success.error_message == (
        "1 span rejected: resourceSpans[0].scopeSpans[0].spans[1]: trace id must not be all zero")


def test_api_key_is_required_as_for_events(make_app):
    client = make_app({"SERVICE_API_KEY": "k3y"}).test_client()
    body = to_protobuf(llm_request())
    assert post(client, body, PROTOBUF).status_code == 401
    assert post(client, body, PROTOBUF, **{"X-API-Key": "wrong"}).status_code == 401
    assert post(client, body, PROTOBUF, **{"X-API-Key": "k3y"}).status_code == 200


def test_rate_limit_is_shared_with_events(make_app):
    client = make_app({"OBSCTL_RATE_LIMITS": "events=2/minute"}).test_client()
    assert client.post("/events", json={"events": []}).status_code == 200
    assert post(client, b"", PROTOBUF).status_code == 200
    response = post(client, b"", PROTOBUF)
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) >= 1
    assert response.headers["RateLimit-Limit"] == "2"
    assert "error" in response.get_json()


def test_openapi_documents_the_route(client):
    doc = client.get("/openapi.json").get_json()
    operation = doc["paths"]["/v1/traces"]["post"]
    assert set(operation["requestBody"]["content"]) == {PROTOBUF, "application/json"}
    assert {"200", "400", "413", "415", "429"} <= set(operation["responses"])
