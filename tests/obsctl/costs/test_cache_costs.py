"""Cache read, cache write and reasoning tokens: stored per event and per session, each priced at
its own rate, hand-computed.

The prices are long-published ones that do not change (genai-prices' data): claude-3-5-sonnet-20241022
$3 input, $0.30 cache read, $3.75 cache write, $15 output per million tokens; gpt-4o-mini-2024-07-18
$0.15 input, $0.075 cache read, $0.60 output (no cache write or reasoning price of its own: input and
output). Cache tokens are parts of tokens_in and reasoning tokens a part of tokens_out, as
OpenTelemetry counts them.
"""

from __future__ import annotations

import pytest

from obsctl.errors import InvalidInput, NotFound
from obsctl.services.analytics import get_analytics
from obsctl.services.ingest import ingest_events
from obsctl.services.maintenance import reprice
from obsctl.services.otlp import ingest_otlp
from obsctl.services.sessions import get_session
from obsctl.services.sessions.compare import compare_sessions
from tests.conftest import event, use_prices
from tests.otlp_recordings import trace_bodies

T = "2026-11-20T10:00:0{}Z"
SONNET = "claude-3-5-sonnet-20241022"
MINI = "gpt-4o-mini-2024-07-18"


def test_an_anthropic_model_with_a_cache_write_then_cache_reads(db):
    ingest_events(db, [
        # The first call writes the 1,000-token system prompt to the cache:
        # 100 x $3 + 1000 x $3.75 + 20 x $15 per million = $0.00435
        event("anthropic", event_id="a1", model=SONNET, tokens_in=1100, tokens_cache_write=1000, tokens_out=20,
              timestamp=T.format(1)),
        # The next ones read it: 150 x $3 + 1000 x $0.30 + 30 x $15 per million = $0.0012
        event("anthropic", event_id="a2", model=SONNET, tokens_in=1150, tokens_cache_read=1000, tokens_out=30,
              timestamp=T.format(2)),
        event("anthropic", event_id="a3", model=SONNET, tokens_in=1150, tokens_cache_read=1000, tokens_out=30,
              timestamp=T.format(3)),
    ])
    session = get_session(db, "anthropic")
    assert [e["cost_usd"] for e in session["events"]] == [0.00435, 0.0012, 0.0012]
    # Priced as plain input, the same tokens would cost 3400 x $3 + 80 x $15 = $0.0114.
    assert session["cost_usd"] == 0.00675
    assert (session["total_tokens_in"], session["total_tokens_out"]) == (3400, 80)
    assert (session["total_tokens_cache_read"], session["total_tokens_cache_write"],
            session["total_tokens_reasoning"]) == (2000, 1000, 0)
    assert [(e["tokens_cache_read"], e["tokens_cache_write"]) for e in session["events"]] == [
        (None, 1000), (1000, None), (1000, None)]
    by_model = {m["model"]: m for m in get_analytics(db)["costs"]["by_model"]}
    assert by_model[SONNET]["cost_usd"] == 0.00675
    usage = {m["model"]: m for m in get_analytics(db)["model_usage"]}[SONNET]
    assert (usage["total_tokens_cache_read"], usage["total_tokens_cache_write"],
            usage["total_tokens_reasoning"]) == (2000, 1000, 0)


def test_an_openai_model_with_cached_prompt_tokens_and_reasoning(db):
    # 400 x $0.15 + 600 x $0.075 + (60 + 40 reasoning) x $0.60 per million = $0.000165
    ingest_events(db, [event("openai", model=MINI, tokens_in=1000, tokens_cache_read=600, tokens_out=100,
                             tokens_reasoning=40, timestamp=T.format(1))])
    session = get_session(db, "openai")
    assert session["cost_usd"] == 0.000165
    assert (session["total_tokens_cache_read"], session["total_tokens_reasoning"]) == (600, 40)


def test_overrides_give_cache_and_reasoning_rates_or_fall_back_to_input_and_output(db, tmp_path):
    use_prices(db, tmp_path, {
        "own-rates": {"input_per_mtok": 10, "output_per_mtok": 20, "cache_read_per_mtok": 1,
                      "cache_write_per_mtok": 12.5, "reasoning_per_mtok": 40},
        "plain": {"input_per_mtok": 10, "output_per_mtok": 20}})
    usage = dict(tokens_in=1000, tokens_cache_read=500, tokens_cache_write=200, tokens_out=100, tokens_reasoning=50)
    ingest_events(db, [event("o", event_id="own", model="own-rates", timestamp=T.format(1), **usage),
                       event("o", event_id="plain", model="plain", timestamp=T.format(2), **usage)])
    costs = {e["event_id"]: e["cost_usd"] for e in get_session(db, "o")["events"]}
    # 300 x $10 + 500 x $1 + 200 x $12.50 + 50 x $20 + 50 x $40 = $0.009; without rates of
    # their own the parts cost what input and output do: 1000 x $10 + 100 x $20 = $0.012.
    assert costs == {"own": 0.009, "plain": 0.012}


def test_a_bad_override_rate_is_named(db, tmp_path):
    use_prices(db, tmp_path, {"m": {"input_per_mtok": 1, "output_per_mtok": 2, "cache_read_per_mtok": -1}})
    with pytest.raises(InvalidInput, match=r"'m'.cache_read_per_mtok must be a non-negative number"):
        ingest_events(db, [event("x", model="m", tokens_in=1)])
    use_prices(db, tmp_path, {"m": {"input_per_mtok": 1, "output_per_mtok": 2, "cache_per_mtok": 1}})
    with pytest.raises(InvalidInput, match=r"unknown key 'cache_per_mtok'"):
        ingest_events(db, [event("x", model="m", tokens_in=1)])


def test_parts_larger_than_their_whole_are_refused_with_the_reason(db):
    with pytest.raises(InvalidInput) as caught:
        ingest_events(db, [event("bad", model=MINI, tokens_in=100, tokens_cache_read=80, tokens_cache_write=40),
                           event("bad", model=MINI, tokens_out=5, tokens_reasoning=6)])
    messages = {(d["index"], d["field"]): d["message"] for d in caught.value.details}
    assert messages == {
        (0, "tokens_cache_read"): "plus tokens_cache_write (120) must not exceed tokens_in (100): tokens_in "
                                  "counts every input token, cached ones included",
        (1, "tokens_reasoning"): "(6) must not exceed tokens_out (5): tokens_out counts every output token, "
                                 "reasoning included"}
    with pytest.raises(NotFound):
        get_session(db, "bad")


def test_reprice_gives_the_costs_ingest_gave(db):
    ingest_events(db, [event("r", event_id=f"r{i}", model=model, tokens_in=1000 + i, tokens_cache_read=300 + i,
                             tokens_cache_write=i * 7, tokens_out=90 + i, tokens_reasoning=i, timestamp=T.format(i))
                       for i, model in enumerate([SONNET, MINI, SONNET, MINI, "no-such-model"])])
    before = get_session(db, "r")
    assert reprice(db)["cache_counts_recounted"] == 0
    after = get_session(db, "r")
    assert [e["cost_usd"] for e in after["events"]] == [e["cost_usd"] for e in before["events"]]
    assert (after["cost_usd"], after["unpriced_calls"], after["total_tokens_cache_read"]) == (
        before["cost_usd"], 1, sum(300 + i for i in range(5)))


def test_compare_shows_the_cache_parts(db):
    ingest_events(db, [event("a", model=SONNET, tokens_in=1100, tokens_cache_write=1000, tokens_out=20),
                       event("b", model=SONNET, tokens_in=1150, tokens_cache_read=1000, tokens_out=30)])
    result = compare_sessions(db, "a", "b")
    assert (result["session_a"]["tokens_cache_write"], result["session_b"]["tokens_cache_read"]) == (1000, 1000)
    assert result["deltas"]["tokens_cache_read"] == {"absolute": 1000, "percent": None}


def test_spans_stored_before_cache_counts_get_them_from_reprice(db):
    """A database written before cache tokens were counted keeps each span's attributes; `db
    reprice` reads the counts from them and costs the spans as ingest does today."""
    for name in ("anthropic", "langfuse-v5", "vercel-ai"):
        for body in trace_bodies(name):
            ingest_otlp(db, body, "protobuf")
    sessions = ("capture-anthropic-session-1", "capture-langfuse-v5-session-1", "capture-vercel-ai-session-1")
    today = {s: get_session(db, s) for s in sessions}
    assert (today["capture-anthropic-session-1"]["total_tokens_cache_read"],
            today["capture-anthropic-session-1"]["total_tokens_cache_write"]) == (2000, 1000)
    # As stored before m031: no parts, every token priced as plain input or output.
    db.conn.execute("UPDATE events SET tokens_cache_read = NULL, tokens_cache_write = NULL, tokens_reasoning = NULL")
    db.conn.execute("UPDATE sessions SET total_tokens_cache_read = 0, total_tokens_cache_write = 0, "
                    "total_tokens_reasoning = 0")
    result = reprice(db)
    # 3 Anthropic calls with a cache count, 2 of 3 calls in each of the OpenAI recordings.
    assert result["cache_counts_recounted"] == 7
    for session_id, session in today.items():
        again = get_session(db, session_id)
        assert again == session
    assert reprice(db)["cache_counts_recounted"] == 0
