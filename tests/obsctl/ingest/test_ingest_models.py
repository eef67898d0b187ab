"""The declared event model (models/ingest.py), which the OpenAPI document is generated from,
draws the same lines as the service's validation."""

from __future__ import annotations

from pathlib import Path

import msgspec
import orjson
import pytest

from obsctl.models.ingest import MAX_TOKENS, EventBatch, EventInput
from obsctl.services.ingest import validate_event
from tests.conftest import event

NOW = "2026-01-15T12:00:00.000Z"
DEMO = Path(__file__).resolve().parents[3] / "examples" / "demo-events.jsonl"


def model_accepts(ev: dict) -> bool:
    try:
        msgspec.convert(ev, EventInput)
    except msgspec.ValidationError:
        return False
    return True


def service_accepts(ev: dict) -> bool:
    return validate_event(ev, 0, [], NOW) is not None


@pytest.mark.parametrize("fields", [
    {"session_id": "s" * 128}, {"event_id": "e" * 128}, {"event_type": "t" * 256},
    {"model": "m" * 256}, {"agent_name": ""}, {"tokens_in": 0}, {"tokens_out": MAX_TOKENS},
    {"total_tokens_in": MAX_TOKENS}, {"duration_ms": 0}, {"duration_ms": 1e15}, {"duration_ms": 2.5},
    {"metadata": {}}, {"tool_call": None}, {"status": "error"}, {"parent_id": "p"},
])
def test_values_at_the_limits_are_accepted_by_both(fields):
    ev = event(**fields)
    assert model_accepts(ev) and service_accepts(ev)


@pytest.mark.parametrize("fields", [
    {"session_id": "s" * 129}, {"session_id": ""}, {"event_id": ""}, {"event_type": ""},
    {"event_type": "t" * 257}, {"model": "m" * 257}, {"agent_name": 7}, {"tokens_in": -1},
    {"tokens_out": MAX_TOKENS + 1}, {"tokens_in": 2.0}, {"tokens_in": True},
    {"total_tokens_out": -1}, {"duration_ms": -0.5}, {"duration_ms": 1e15 + 1e3},
    {"duration_ms": "5"}, {"metadata": []}, {"input_data": "text"}, {"status": 1},
    {"parent_id": 3}, {"timestamp": 5},
])
def test_values_beyond_the_limits_are_refused_by_both(fields):
    ev = event(**fields)
    assert not model_accepts(ev)
    assert not service_accepts(ev)


def test_the_demo_sample_decodes_as_a_declared_batch():
    events = [orjson.loads(line) for line in DEMO.read_bytes().splitlines() if line.strip()]
    body = orjson.dumps({"events": events})
    assert len(msgspec.json.decode(body, type=EventBatch).events) == len(events)
    assert all(service_accepts(ev) for ev in events)


def test_a_key_beside_events_is_refused_by_the_declared_batch():
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"events": [], "extra": 1}, EventBatch)
