"""Whatever arrives at POST /v1/traces, the answer is 200 or 400, never a server error."""

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.otlp_support import request, span, to_protobuf

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

json_leaves = (st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1)
               | st.floats(allow_nan=False) | st.text(max_size=40)
               | st.sampled_from(["0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7", "1763719339000000000",
                                  "", "NaN", "stringValue", "intValue", "arrayValue", "kvlistValue"]))
json_values = st.recursive(json_leaves, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(st.text(max_size=12) | st.sampled_from(
                               ["key", "value", "values", "stringValue", "intValue", "doubleValue",
                                "boolValue", "arrayValue", "kvlistValue", "bytesValue", "attributes",
                                "traceId", "spanId", "parentSpanId", "startTimeUnixNano",
                                "endTimeUnixNano", "kind", "status", "code", "message", "events",
                                "name"]), children, max_size=5), max_leaves=25)


@pytest.fixture
def client(make_app):
    """Rate limits off: hundreds of requests are sent in a few seconds."""
    return make_app({"OBSCTL_RATE_LIMITS": "off"}).test_client()


def otlp_shaped(spans):
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}


def check(response):
    assert response.status_code in (200, 400), response.data
    if response.status_code == 200 and response.mimetype == "application/json":
        body = response.get_json()
        assert set(body) <= {"partialSuccess"}


@FUZZ
@given(json_values)
def test_any_json_document(client, document):
    check(client.post("/v1/traces", data=orjson.dumps(document), content_type="application/json"))


@FUZZ
@given(st.lists(st.dictionaries(st.sampled_from(
    ["traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano",
     "attributes", "events", "status"]), json_values, max_size=10), max_size=4))
def test_otlp_shaped_json_with_random_span_fields(client, spans):
    check(client.post("/v1/traces", data=orjson.dumps(otlp_shaped(spans)), content_type="application/json"))


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["session.id", "gen_ai.usage.input_tokens", "gen_ai.request.model",
                                           "gen_ai.input.messages", "gen_ai.output.messages",
                                           "gen_ai.tool.call.arguments", "error.type", "service.name",
                                           "gen_ai.agent.name", "gen_ai.prompt.0.content"]),
                          json_values), max_size=6))
def test_random_attribute_values(client, pairs):
    document = otlp_shaped([span("00f067aa0ba902b7")])
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"] = [
        {"key": k, "value": v} for k, v in pairs]
    check(client.post("/v1/traces", data=orjson.dumps(document), content_type="application/json"))


@FUZZ
@given(st.binary(max_size=300))
def test_any_protobuf_bytes(client, body):
    check(client.post("/v1/traces", data=body, content_type="application/x-protobuf"))


VALID = to_protobuf(request(span("00f067aa0ba902b7", parent="53995c3f42cd8ad8", attrs={
    "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 3, "session.id": "fuzz",
    "gen_ai.input.messages": '[{"role": "user"}]', "nested": {"a": [1, 2.5, True]}})))


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(VALID) - 1),
                          st.integers(min_value=0, max_value=255)), min_size=1, max_size=4))
def test_corrupted_protobuf(client, edits):
    body = bytearray(VALID)
    for position, value in edits:
        body[position] = value
    check(client.post("/v1/traces", data=bytes(body), content_type="application/x-protobuf"))


def test_deeply_nested_values_are_cut_not_crashing(client):
    # 200 nested arrays (600 JSON levels) is within the JSON parser's limit but far beyond
    # what the JSON encoder could write back; written as text since orjson cannot dump it.
    deep_any = '{"arrayValue": {"values": [' * 200 + '{"stringValue": "leaf"}' + "]}}" * 200
    document = otlp_shaped([span("00f067aa0ba902b7")])
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"] = [
        {"key": "deep", "value": "DEEP"},
        {"key": "gen_ai.input.messages", "value": {"stringValue": "[" * 600 + "]" * 600}},
    ]
    body = orjson.dumps(document).replace(b'"DEEP"', deep_any.encode())
    response = client.post("/v1/traces", data=body, content_type="application/json")
    assert response.status_code == 200
    event = client.get("/sessions/0af7651916cd43dd8448eb211c80319c").get_json()["events"][0]
    # 16 levels of arrays are kept, the rest is cut; the unencodable JSON text stays text.
    value, depth = event["metadata"]["attributes"]["deep"], 0
    while isinstance(value, list):
        value, depth = value[0], depth + 1
    assert (depth, value) == (16, None)
    assert event["input_data"] == {"messages": "[" * 600 + "]" * 600}
