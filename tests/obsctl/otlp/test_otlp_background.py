"""Work outside any agent run is background work: LlamaIndex's indexing traces (embeddings and
node parsing: chain spans, no agent span, no chat call or tool call) are kept as sessions marked
`background`, and triage batch and scorecards leave them out. Asserted from the recorded
LlamaIndex export; a later span of a run turns such a session into a run for good."""

from __future__ import annotations

from datetime import timedelta

import orjson

from obsctl.config import Settings
from obsctl.services.otlp import ingest_otlp
from obsctl.services.pricing import Pricer
from obsctl.services.scorecards import list_scorecards
from obsctl.services.sessions import get_session, list_sessions
from obsctl.services.triage import triage_batch
from obsctl.timeutil import parse_ts
from tests.otlp_recordings import trace_bodies
from tests.otlp_support import T0, request, span

RUN = "capture-llama-index-session-1"


def _ingest(store, recording: str) -> None:
    for body in trace_bodies(recording):
        ingest_otlp(store, body, "protobuf")


def test_llama_index_indexing_traces_are_background_work(store):
    _ingest(store, "llama-index")
    sessions = {s["session_id"]: s for s in list_sessions(store, limit=100)["sessions"]}
    background = sorted(s for s, v in sessions.items() if v["background"])
    # The two traces outside the agent run: parsing the documents into nodes (CHAIN spans) and
    # embedding them (an EMBEDDING span).
    assert len(background) == 2 and RUN not in background
    assert all(len(s) == 32 for s in background)  # named after their traces: no session id was set
    assert sessions[RUN]["background"] is False
    # Kept and readable, with their spans.
    assert all(get_session(store, s)["events"] for s in background)
    batch = triage_batch(store, pricer=Pricer(), since="2000-01-01T00:00:00Z")
    assert [r["session_id"] for r in batch["reports"]] == [RUN] and batch["total"] == 1


def test_scorecards_leave_background_work_out(store, db_url):
    _ingest(store, "llama-index")
    at = parse_ts(get_session(store, RUN)["started_at"]) + timedelta(hours=1)
    cards = list_scorecards(store, Settings.from_env({}, db_url=db_url), days=1, at=at)
    assert [(c["agent"], c["sessions_analyzed"]) for c in cards] == [(get_session(store, RUN)["agent_name"], 1)]


def test_a_run_span_arriving_later_makes_the_session_a_run(store):
    step = span("00f067aa0ba902b7", name="load documents", attrs={"session.id": "later"})
    ingest_otlp(store, orjson.dumps(request(step)), "json")
    assert get_session(store, "later")["background"] is True
    call = span("53995c3f42cd8ad8", name="chat gpt-4o", start=T0 + 5_000_000,
                attrs={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "session.id": "later"})
    ingest_otlp(store, orjson.dumps(request(call)), "json")
    assert get_session(store, "later")["background"] is False
    # More background spans afterwards do not undo it.
    again = span("1111111111111111", name="embed", start=T0 + 9_000_000,
                 attrs={"gen_ai.operation.name": "embeddings", "gen_ai.request.model": "e", "session.id": "later"})
    ingest_otlp(store, orjson.dumps(request(again)), "json")
    assert get_session(store, "later")["background"] is False
