"""The OpenAPI document says what the API accepts: each input here gets the same verdict from the
document (validated with a JSON Schema 2020-12 validator) and from the real app."""

from __future__ import annotations

import re
import sys

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from obsctl.timeutil import normalize_ts
from obsctl.web.openapi import build_document
from obsctl.web.openapi_util import ISO_8601, NOT_BLANK
from tests.conftest import event

DOC = build_document()


def schema_ok(schema: dict, instance) -> bool:
    return jsonschema_rs.Draft202012Validator({**schema, "components": DOC["components"]}).is_valid(instance)


def component_ok(name: str, instance) -> bool:
    return schema_ok({"$ref": f"#/components/schemas/{name}"}, instance)


def param_schema(path: str, method: str, name: str) -> dict:
    params = DOC["paths"][path][method].get("parameters", [])
    return next(p["schema"] for p in params if p["name"] == name)


def body_schema(path: str, method: str) -> dict:
    return DOC["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]


@pytest.fixture
def client(make_app):
    return make_app({"OBSCTL_RATE_LIMITS": "off"}).test_client()


# --- POST /events ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fields", [
    {"event_id": ""}, {"timestamp": ""}, {"session_id": ""}, {"event_type": ""},
    {"timestamp": "00000"}, {"timestamp": "tomorrow"}, {"timestamp": "2026-11"},
])
def test_event_fields_the_api_refuses_are_invalid_in_the_document(client, fields):
    assert not component_ok("EventInput", event(**fields))
    assert client.post("/events", json={"events": [event(**fields)]}).status_code == 400


@pytest.mark.parametrize("fields", [
    {"event_id": "e1"}, {"timestamp": "2026-11-21T20:42:19.123Z"}, {"timestamp": "20261121"},
    {"timestamp": "2026-W47-6 10:00+01:00"}, {"timestamp": None}, {"event_id": None}, {"model": None},
])
def test_event_fields_the_api_accepts_are_valid_in_the_document(client, fields):
    assert component_ok("EventInput", event(**fields))
    assert client.post("/events", json={"events": [event(**fields)]}).status_code == 200


@settings(max_examples=1000, deadline=None)
@given(st.one_of(
    st.text(alphabet="0123456789-W:T.Z+, x\t", max_size=30),
    st.builds(lambda head, tail: head + tail,
              st.sampled_from(["2026", "2026-", "2026W", "2026-W", "2026-11-21", "20261121", "2026-W47-"]),
              st.text(alphabet="0123456789-W:T.Z+, \u00e9", max_size=20)),
))
def test_every_timestamp_the_api_reads_matches_the_documented_pattern(text):
    try:
        normalize_ts(text)
    except (ValueError, OverflowError):
        return
    assert re.search(ISO_8601, text), text


def test_not_blank_is_exactly_what_python_strip_keeps():
    pattern = re.compile(NOT_BLANK)
    differ = [hex(c) for c in range(sys.maxunicode + 1) if (pattern.fullmatch(chr(c)) is None) != chr(c).isspace()]
    assert differ == []


# --- webhooks --------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["0", "example.com/hook", "ftp://example.com/x", "http://", "http:///path",
                                 "//example.com/hook", "mailto:ops@example.com"])
def test_webhook_urls_without_http_scheme_and_host_are_invalid_in_the_document(client, url):
    assert not component_ok("WebhookInput", {"url": url})
    assert client.post("/webhooks", json={"url": url}).status_code == 400


@pytest.mark.parametrize("url", ["https://8.8.8.8/hook", "HTTP://8.8.8.8:8080/x?y=1"])
def test_public_http_urls_are_valid_and_accepted(client, url):
    assert component_ok("WebhookInput", {"url": url})
    assert client.post("/webhooks", json={"url": url}).status_code == 201


@pytest.mark.parametrize("key", ["", "   ", "\x1c"])
def test_a_blank_routing_key_is_invalid_in_the_document_and_refused(client, key):
    body = {"url": "https://8.8.8.8/hook", "format": "pagerduty", "routing_key": key}
    assert not component_ok("WebhookInput", body)
    assert client.post("/webhooks", json=body).status_code == 400


# --- SLA -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, valid", [
    ("\x0c", False), (" ", False), ("\x1c", False), ("\u3000", False), ("x" * 257, False),
    ("", True), ("alpha", True), (" a ", True), ("\ufeff", True), ("x" * 256, True),
])
def test_sla_history_agent_name_document_and_api_agree(client, value, valid):
    assert schema_ok(param_schema("/sla/history", "get", "agent_name"), value) is valid
    status = client.get("/sla/history", query_string={"agent_name": value}).status_code
    assert status == (200 if valid else 400)


@pytest.mark.parametrize("name, valid", [("\x1c", False), ("\t\n", False), ("\ufeff", True), ("a", True)])
def test_sla_target_agent_name_document_and_api_agree(client, name, valid):
    body = {"agent_name": name, "metric": "error_rate", "target_value": 5, "operator": "<="}
    assert component_ok("SlaTargetInput", body) is valid
    assert client.put("/sla/targets", json=body).status_code == (201 if valid else 400)


def test_delete_sla_target_documents_the_body_as_required(client):
    operation = DOC["paths"]["/sla/targets"]["delete"]
    assert operation["requestBody"]["required"] is True
    assert body_schema("/sla/targets", "delete")["required"] == ["agent_name", "metric"]
    assert "parameters" not in operation  # the query-string fallback is described, not declared
    assert "query parameters" in operation["description"]


@pytest.mark.parametrize("query", ["agent_name=0", "metric=error_rate", ""])
def test_delete_sla_target_without_a_full_pair_is_refused(client, query):
    assert client.delete(f"/sla/targets?{query}").status_code == 400


def test_delete_sla_target_by_body_or_by_query_pair(client):
    target = {"agent_name": "alpha", "metric": "error_rate", "target_value": 5, "operator": "<="}
    client.put("/sla/targets", json=target)
    pair = {"agent_name": "alpha", "metric": "error_rate"}
    assert schema_ok(body_schema("/sla/targets", "delete"), pair)
    assert client.delete("/sla/targets", json=pair).status_code == 200
    client.put("/sla/targets", json=target)
    assert client.delete("/sla/targets?agent_name=alpha&metric=error_rate").status_code == 200


# --- alert rules -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, valid", [("\x1c", False), ("\u2003", False), ("\ufeff", True), ("cpu", True)])
def test_alert_rule_name_document_and_api_agree(client, name, valid):
    body = {"name": name, "metric": "error_rate", "operator": ">", "threshold": 5}
    assert component_ok("AlertRuleInput", body) is valid
    assert client.post("/alerts/rules", json=body).status_code == (201 if valid else 400)
