"""Cache read, cache write and reasoning tokens as every recorded client reports them (each its
own attribute names: tests/data/otlp/README.md), summed per session and costed at their own
prices. The fake provider of the capture kit answers each scenario's later calls with 64 cached
prompt tokens and 8 reasoning tokens (OpenAI), or a 1,000-token cache write then cache reads
(Anthropic).

Hand-computed costs, per million tokens: gpt-4o-mini-2024-07-18 $0.15 input, $0.075 cached input,
$0.60 output (reasoning is output); a first call of 100 in / 20 out costs $0.000027 and a later
one of 150 in (64 cached) / 30 out (8 reasoning) 86 x 0.15 + 64 x 0.075 + 30 x 0.60 = $0.0000357.
Claude Sonnet 4.5 $3 input, $3.75 cache write, $0.30 cache read, $15 output: 100 x 3 + 1000 x
3.75 + 20 x 15 = $0.00435, then 150 x 3 + 1000 x 0.30 + 30 x 15 = $0.0012 a call.
"""

from __future__ import annotations

import pytest

from tests.otlp_recordings import replay, session_events

FIRST, LATER = 0.000027, 0.0000357
# recording -> (session, tokens in, out, cache read, cache write, reasoning, cost)
EXPECTED = {
    "openai-agents": ("capture-openai-agents-session-1", 550, 110, 192, 0, 24, FIRST + 3 * LATER),
    "langchain": ("capture-langchain-thread-1", 500, 100, 128, 0, 16, 2 * FIRST + 2 * LATER),
    "llama-index": ("capture-llama-index-session-1", 550, 110, 192, 0, 24, FIRST + 3 * LATER),
    "pydantic-ai": ("capture-pydantic-ai-conversation-1", 500, 100, 128, 0, 16, 2 * FIRST + 2 * LATER),
    "traceloop": ("capture-traceloop-session-1", 400, 80, 128, 0, 16, FIRST + 2 * LATER),
    "langfuse-v3": ("capture-langfuse-v3-session-1", 400, 80, 128, 0, 16, FIRST + 2 * LATER),
    "langfuse-v5": ("capture-langfuse-v5-session-1", 400, 80, 128, 0, 16, FIRST + 2 * LATER),
    "vercel-ai": ("capture-vercel-ai-session-1", 400, 80, 128, 0, 16, FIRST + 2 * LATER),
    # No cache attributes: the same calls priced as plain input and output.
    "openai-v2/default": ("capture-openai-v2-conversation-default", 400, 80, 0, 0, 0, 0.000027 + 2 * 0.0000405),
    "anthropic": ("capture-anthropic-session-1", 3400, 80, 2000, 1000, 0, 0.00435 + 2 * 0.0012),
    "anthropic-openllmetry": ("capture-anthropic-session-1", 3400, 80, 2000, 1000, 0, 0.00435 + 2 * 0.0012),
}


@pytest.mark.parametrize("recording", sorted(EXPECTED))
def test_every_clients_cache_and_reasoning_tokens_are_counted_and_costed(client, recording):
    session_id, tokens_in, tokens_out, cache_read, cache_write, reasoning, cost = EXPECTED[recording]
    assert all(status == 200 for _, status, _ in replay(client, recording))
    session, by_type = session_events(client, session_id)
    assert (session["total_tokens_in"], session["total_tokens_out"], session["total_tokens_cache_read"],
            session["total_tokens_cache_write"], session["total_tokens_reasoning"]) == (
        tokens_in, tokens_out, cache_read, cache_write, reasoning)
    assert session["cost_usd"] == pytest.approx(cost, abs=1e-9)
    # Each part stays within its call's whole.
    for call in by_type["llm_call"]:
        assert (call["tokens_cache_read"] or 0) + (call["tokens_cache_write"] or 0) <= (call["tokens_in"] or 0)
        assert (call["tokens_reasoning"] or 0) <= (call["tokens_out"] or 0)
