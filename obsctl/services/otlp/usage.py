"""Token usage counted once per model call.

Frameworks report `gen_ai.usage.*` (or `llm.token_count.*`) on an agent or chain span and
again on the model-call spans under it. Session totals, the analytics rollup and every metric
add up the events' `tokens_in`/`tokens_out`, so a span's usage is put there only when the
span made the model call:

- a model-call span (span_role llm: `gen_ai.operation.name` chat, text_completion,
  generate_content or embeddings, OpenInference LLM/EMBEDDING, a request model) counts;
- an agent, chain or workflow span never counts: mapping.span_to_event keeps its usage in the
  event's metadata under `uncounted_usage`;
- any other span with usage (a tool, a task, a span without a kind) counts unless one of its
  direct children is a model-call span; so does a model-call span that wraps another one
  (two instrumentations of the same call).

Children are usually exported before their parent, but may come in a later request. Both
orders are settled after each request's events are written, in the same transaction: the
parents of the request's model-call spans, and the request's spans with usage whose model-call
children were stored earlier, have their usage retracted exactly (the stored counts are taken
off the session and the rollup, and moved to `uncounted_usage`). A span already retracted, or
sent again, has no counted usage left, so nothing is ever taken off twice.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from obsctl.services.otlp.mapping import LLM, UNCOUNTED_USAGE, USAGE_FIELDS, role_from, span_role
from obsctl.services.otlp.wire import SpanRecord
from obsctl.store import Store


def usage_traces(records: Sequence[SpanRecord], raw: Sequence[dict]) -> list[str]:
    """The traces of a request whose usage may need settling: those with a model-call span
    under a parent, or a span with usage (the store serialises requests on them)."""
    return sorted({r.trace_id for r, e in zip(records, raw)
                   if ("tokens_in" in e or "tokens_out" in e)
                   or (r.parent_span_id and span_role(r) == LLM)})


def settle_usage(store: Store, records: Sequence[SpanRecord], raw: Sequence[dict]) -> int:
    """Retract the counted usage of spans that have a model-call child, after the request's
    events were written (inside its transaction). Returns how many spans were retracted."""
    parents: set[str] = set()  # event ids of parents of the request's model-call spans
    with_usage: list[str] = []
    for record, event in zip(records, raw):
        if record.parent_span_id and span_role(record) == LLM:
            parents.add(f"{record.trace_id}:{record.parent_span_id}")
        if "tokens_in" in event or "tokens_out" in event:
            with_usage.append(event["event_id"])
    unsure = [event_id for event_id in with_usage if event_id not in parents]
    if unsure:
        parents.update(parent for parent, event_type, metadata in store.otlp.model_call_children(unsure)
                       if is_model_call(event_type, metadata))
    if not parents:
        return 0
    retracted = []
    for (event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, metadata,
         *parts) in store.otlp.counted_usage(sorted(parents)):
        meta = _loads(metadata)
        if "span_id" not in meta:  # not a span: an event sent to /events is left as it is
            continue
        uncounted = {k: v for k, v in zip(USAGE_FIELDS, (tokens_in, tokens_out, *parts)) if v is not None}
        meta[UNCOUNTED_USAGE] = {**meta.get(UNCOUNTED_USAGE, {}), **uncounted}
        retracted.append((event_id, session_id, event_type, timestamp, model, tokens_in or 0,
                          tokens_out or 0, orjson.dumps(meta).decode()))
    if retracted:
        store.otlp.retract_usage(retracted)
    return len(retracted)


def is_model_call(event_type: str, metadata: str | None) -> bool:
    """Whether a stored span event is a model call: an llm_call, or an error whose span
    attributes (kept in its metadata) make it one."""
    if event_type == "llm_call":
        return True
    attributes = _loads(metadata).get("attributes")
    return type(attributes) is dict and role_from(attributes.get) == LLM


def _loads(metadata: str | None) -> dict:
    if not metadata:
        return {}
    value = orjson.loads(metadata)
    return value if type(value) is dict else {}
