"""Real /alerts and /webhooks responses validate against their OpenAPI schemas (what
schemathesis fuzzes against), including every nullable field and each evaluation status."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jsonschema_rs
import pytest

from obsctl.services.ingest import ingest_events
from obsctl.timeutil import format_ts
from tests.conftest import event
from tests.webhook_receiver import Receiver


@pytest.fixture
def client(make_app):
    return make_app({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}).test_client()


@pytest.fixture
def doc(client):
    return client.get("/openapi.json").get_json()


def check(doc, path: str, method: str, response, status: int = 200) -> dict:
    assert response.status_code == status, response.get_json()
    schema = doc["paths"][path][method]["responses"][str(status)]["content"]["application/json"]["schema"]
    validator = jsonschema_rs.Draft202012Validator({**schema, "components": doc["components"]})
    body = response.get_json()
    assert [str(e) for e in validator.iter_errors(body)] == []
    return body


def test_alert_routes_match_their_schemas(db, client, doc):
    now = datetime.now(UTC)
    ingest_events(db, [event("s", "error", agent_name="a", timestamp=format_ts(now - timedelta(minutes=1)),
                             tool_call={"name": "t"}, model="gpt-4o", tokens_in=5, duration_ms=3)])
    check(doc, "/alerts/rules", "get", client.get("/alerts/rules"))
    rules = [
        {"name": "fires", "metric": "error_rate", "operator": ">", "threshold": 1, "cooldown_minutes": 60},
        {"name": "ok", "metric": "avg_cost", "operator": "<", "threshold": 0},
        {"name": "none", "metric": "p95_duration_ms", "operator": ">", "threshold": 1, "agent_filter": "zz"},
    ]
    created = [check(doc, "/alerts/rules", "post", client.post("/alerts/rules", json=r), 201) for r in rules]
    check(doc, "/alerts/rules/{rule_id}", "get", client.get(f"/alerts/rules/{created[0]['rule_id']}"))
    check(doc, "/alerts/rules/{rule_id}", "put",
          client.put(f"/alerts/rules/{created[1]['rule_id']}", json={"agent_filter": "a"}))
    first = check(doc, "/alerts/evaluate", "post", client.post("/alerts/evaluate"))
    second = check(doc, "/alerts/evaluate", "post", client.post("/alerts/evaluate"))
    assert [r["status"] for r in first["results"]] == ["fired", "ok", "no_data"]
    assert second["results"][0]["status"] == "cooldown"
    events = check(doc, "/alerts/events", "get", client.get("/alerts/events"))
    check(doc, "/alerts/events/{alert_id}/acknowledge", "put",
          client.put(f"/alerts/events/{events['events'][0]['alert_id']}/acknowledge"))
    check(doc, "/alerts/events", "get", client.get("/alerts/events"))
    check(doc, "/alerts/metrics", "get", client.get("/alerts/metrics"))
    check(doc, "/alerts/rules/{rule_id}", "delete", client.delete(f"/alerts/rules/{created[2]['rule_id']}"))
    check(doc, "/alerts/rules", "get", client.get("/alerts/rules"))


def test_webhook_routes_match_their_schemas(client, doc):
    receiver = Receiver().start()
    try:
        unsigned = check(doc, "/webhooks", "post", client.post("/webhooks", json={"url": receiver.url}), 201)
        signed = check(doc, "/webhooks", "post", client.post("/webhooks", json={
            "url": receiver.url, "format": "pagerduty", "routing_key": "k", "secret": "generate"}), 201)
        check(doc, "/webhooks", "get", client.get("/webhooks"))
        check(doc, "/webhooks/{webhook_id}", "get", client.get(f"/webhooks/{signed['webhook_id']}"))
        check(doc, "/webhooks/{webhook_id}", "put",
              client.put(f"/webhooks/{unsigned['webhook_id']}", json={"secret": "generate", "rule_ids": None}))
        check(doc, "/webhooks/{webhook_id}/test", "post", client.post(f"/webhooks/{signed['webhook_id']}/test"))
        receiver.mode = "fail"
        check(doc, "/webhooks/{webhook_id}/test", "post", client.post(f"/webhooks/{signed['webhook_id']}/test"))
        log = check(doc, "/webhooks/deliveries", "get", client.get("/webhooks/deliveries"))
        assert [d["status"] for d in log["deliveries"]] == ["failed", "delivered"]
        check(doc, "/webhooks/{webhook_id}", "delete", client.delete(f"/webhooks/{unsigned['webhook_id']}"))
    finally:
        receiver.stop()
