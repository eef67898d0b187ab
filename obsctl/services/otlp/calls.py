"""A model call is counted once.

Instrumentations mark more spans as model calls (`llm_call`) than there were calls: LlamaIndex's
`OpenAI._prepare_chat_with_tools` step beside each `OpenAI.astream_chat` call, and embedding
spans wrapping the embedding call (`get_query_embedding` around `_get_query_embedding`). Counted
as they come, three model calls read as six, and per-call rates and averages are diluted. So a
span whose role is a model call is stored as a `generic` step, not an `llm_call`, when

- one of its children is a model call itself (it wraps the call), in the same request or
  stored by an earlier one (children end, and are exported, first), or
- it is an OpenInference `LLM` span that carries none of what a call has: no token counts and no
  `llm.input_messages.*` / `llm.output_messages.*` (a preparation step), or
- it is the same call recorded a second time by another instrumentation: a sibling model-call
  span of another instrumentation scope whose time lies within it (OpenLLMetry's
  `anthropic.chat` around the Anthropic SDK's own `anthropic.messages.create`). The inner one
  keeps its data but is not counted: its usage moves to `metadata.uncounted_usage`, a failure's
  message to `output_data.same_call_error`, and `metadata.same_call_as` names the counted one.
  Only siblings exported in one request are compared.

Its attributes, content and duration are kept as they are; a failure on it is still a failure
(failures.py decides whether it counts). Token usage is settled separately (usage.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from obsctl.services.otlp.mapping import LLM, UNCOUNTED_USAGE, USAGE_FIELDS, span_role
from obsctl.services.otlp.usage import is_model_call
from obsctl.services.otlp.wire import SpanRecord
from obsctl.store import Store

STEP_TYPE = "generic"
_CALL_PREFIXES = ("llm.token_count.", "llm.input_messages.", "llm.output_messages.")


def count_model_calls_once(store: Store, records: Sequence[SpanRecord], raw: list[dict]) -> int:
    """Store the model-call spans of a request that are not calls as steps; returns how many.
    `raw` is changed in place."""
    calls = {event["event_id"] for record, event in zip(records, raw)
             if event["event_type"] == "llm_call"}
    if not calls:
        return 0
    wrappers = {event.get("parent_id") for record, event in zip(records, raw)
                if event.get("parent_id") in calls and span_role(record) == LLM and not _preparation(record)}
    unsure = sorted(calls - wrappers)
    if unsure:
        wrappers.update(parent for parent, event_type, metadata in store.otlp.model_call_children(unsure)
                        if is_model_call(event_type, metadata))
    changed = 0
    for record, event in zip(records, raw):
        if event["event_type"] == "llm_call" and (event["event_id"] in wrappers or _preparation(record)):
            event["event_type"] = STEP_TYPE
            changed += 1
    return changed + _same_calls(records, raw)


def _same_calls(records: Sequence[SpanRecord], raw: list[dict]) -> int:
    """Mark the inner one of two sibling model-call spans of different instrumentations that
    record one call; returns how many."""
    siblings: dict[str, list[int]] = {}
    for i, (record, event) in enumerate(zip(records, raw)):
        if record.parent_span_id and span_role(record) == LLM and event["event_type"] != STEP_TYPE:
            siblings.setdefault(f"{record.trace_id}:{record.parent_span_id}", []).append(i)
    changed = 0
    for group in siblings.values():
        if len(group) < 2:
            continue
        for i in group:
            inner = records[i]
            outer = next((j for j in group if j != i and records[j].scope != inner.scope
                          and records[j].start_ns <= inner.start_ns and inner.end_ns <= records[j].end_ns
                          and "same_call_as" not in raw[j].get("metadata", {})), None)
            if outer is not None:
                _not_counted(raw[i], raw[outer]["event_id"])
                changed += 1
    return changed


def _not_counted(event: dict, counted_id: str) -> None:
    event["event_type"] = STEP_TYPE
    metadata = event.setdefault("metadata", {})
    metadata["same_call_as"] = counted_id
    usage = {k: event.pop(k) for k in USAGE_FIELDS if k in event}
    if usage:
        metadata[UNCOUNTED_USAGE] = {**metadata.get(UNCOUNTED_USAGE, {}), **usage}
    output = event.get("output_data")
    if type(output) is dict and "error" in output:
        output = dict(output)
        output["same_call_error"] = output.pop("error")
        output.pop("exception_type", None)
        output.pop("stacktrace", None)
        event["output_data"] = output


def _preparation(record: SpanRecord) -> bool:
    kind = record.attributes.get("openinference.span.kind")
    if type(kind) is not str or kind.upper() != "LLM":
        return False
    return not any(key.startswith(_CALL_PREFIXES) for key in record.attributes)
