"""Token counts of a span, from whichever convention reported them: input and output tokens,
and their parts (cache reads and writes of the input, reasoning of the output), on the span's
attributes or inside Langfuse's `usage_details` JSON. services/otlp/mapping.py puts them on the
event; `db reprice` reads the parts of spans stored before they were counted."""

from __future__ import annotations

from typing import Any

from obsctl.models.ingest import MAX_TOKENS
from obsctl.services.otlp.attributes import parse_json

TOKENS_IN_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
                  "ai.usage.inputTokens", "ai.usage.promptTokens")
TOKENS_OUT_KEYS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                   "llm.token_count.completion", "ai.usage.outputTokens", "ai.usage.completionTokens")
# The parts of those counts: cache reads and writes of the input, reasoning of the output.
CACHE_READ_KEYS = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                   "gen_ai.usage.details.cache_read_tokens", "llm.token_count.prompt_details.cache_read",
                   "ai.usage.inputTokenDetails.cacheReadTokens", "ai.usage.cachedInputTokens")
CACHE_WRITE_KEYS = ("gen_ai.usage.cache_write.input_tokens", "gen_ai.usage.cache_creation.input_tokens",
                    "gen_ai.usage.cache_creation_input_tokens", "gen_ai.usage.details.cache_write_tokens",
                    "llm.token_count.prompt_details.cache_write", "ai.usage.inputTokenDetails.cacheWriteTokens")
REASONING_KEYS = ("gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens",
                  "gen_ai.usage.details.reasoning_tokens", "llm.token_count.completion_details.reasoning",
                  "ai.usage.outputTokenDetails.reasoningTokens", "ai.usage.reasoningTokens")
# An event's usage fields: the counts, then their parts.
USAGE_FIELDS = ("tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write", "tokens_reasoning")

# Keys of Langfuse's `usage_details` JSON: its own (input, output), or the provider's as the
# SDK's wrappers pass them on (OpenAI's nested details, Anthropic's cache counts).
_LANGFUSE_IN = ("input", "prompt_tokens", "input_tokens")
_LANGFUSE_OUT = ("output", "completion_tokens", "output_tokens")
_LANGFUSE_PARTS = (
    ("tokens_cache_read", (("prompt_tokens_details", "cached_tokens"), ("input_tokens_details", "cached_tokens"),
                           ("cache_read_input_tokens",), ("input_cached_tokens",))),
    ("tokens_cache_write", (("cache_creation_input_tokens",),)),
    ("tokens_reasoning", (("completion_tokens_details", "reasoning_tokens"),
                          ("output_tokens_details", "reasoning_tokens"), ("output_reasoning_tokens",))),
)


def usage_parts(event: dict, get) -> None:
    """The cache read, cache write and reasoning parts of a span's token counts, first present
    key of each wins. 0 is left out (nothing to price apart), and so is a value that is not a
    count: a part is a detail of the counts, and a bad one never costs the span."""
    for name, keys in _PARTS_OF:
        for key in keys:
            value = get(key)
            if value is not None and value != "":
                value = _part(value)
                if value:
                    event[name] = value
                break
    _whole_counts(event)


def _part(value: Any) -> int | None:
    value = count(value)
    return value if type(value) is int and 0 < value <= MAX_TOKENS else None


_PARTS_OF = (("tokens_cache_read", CACHE_READ_KEYS), ("tokens_cache_write", CACHE_WRITE_KEYS),
             ("tokens_reasoning", REASONING_KEYS))


def _whole_counts(event: dict) -> None:
    """Make the input and output counts hold their parts. The conventions count cache tokens
    in the input (and reasoning in the output); a client that reports them beside it (more
    cached tokens than input tokens: Anthropic's own counting) has them added."""
    for whole, parts in (("tokens_in", ("tokens_cache_read", "tokens_cache_write")),
                         ("tokens_out", ("tokens_reasoning",))):
        counted = [event[p] for p in parts if p in event]
        if not counted:
            continue
        total = event.get(whole)
        if total is None:
            event[whole] = sum(counted)
        elif type(total) is int and sum(counted) > total:
            event[whole] = total + sum(counted)


def stored_usage_parts(attributes: dict, tokens_in: int | None, tokens_out: int | None) -> tuple | None:
    """(cache read, cache write, reasoning) of a span stored before these were (`db reprice`),
    from the attributes kept in its metadata: what ingest reads today, when it fits in the
    stored counts; None when there is none, or when ingest today would count differently."""
    counts = {k: v for k, v in (("tokens_in", tokens_in), ("tokens_out", tokens_out)) if v is not None}
    probe = dict(counts)
    get = attributes.get
    if any(get(k) not in (None, "") for k in (*TOKENS_IN_KEYS, *TOKENS_OUT_KEYS)):
        usage_parts(probe, get)
    else:
        found = langfuse_usage(get("langfuse.observation.usage_details"))
        probe.update({name: found[name] for name, _ in _PARTS_OF if name in found})
        _whole_counts(probe)
    parts = tuple(probe.get(name) for name, _ in _PARTS_OF)
    if not any(parts) or any(probe.get(k) != v for k, v in counts.items()):
        return None
    return parts


def langfuse_usage(details: Any) -> dict:
    """tokens_in/tokens_out and their cache and reasoning parts from Langfuse's
    `usage_details` (a JSON object of counts, OpenAI's nested details included)."""
    if details is None:
        return {}
    details = parse_json(details)
    if type(details) is not dict:
        return {}
    found = {}
    for name, keys in (("tokens_in", _LANGFUSE_IN), ("tokens_out", _LANGFUSE_OUT)):
        value = next((details[k] for k in keys if details.get(k) is not None), None)
        if value is not None:
            found[name] = count(value)
    for name, paths in _LANGFUSE_PARTS:
        for path in paths:
            node: Any = details
            for key in path:
                node = node.get(key) if type(node) is dict else None
            if node is not None:
                part = _part(node)
                if part:
                    found[name] = part
                break
    _whole_counts(found)
    return found


def count(value: Any) -> Any:
    """A token count as an integer; anything else is passed on for validation to report."""
    if type(value) is float and value.is_integer():
        return int(value)
    if type(value) is str and value.isdigit():
        return int(value)
    return value
