"""One failure counts once.

Frameworks mark a failure on the span where it happened and again on every ancestor it passed
through (the tool, the graph node running it, the agent run): LangChain turns one tool error
into three failed spans, LlamaIndex into six. Counting each would multiply error counts, rates,
triage findings, grades, alert metrics and SLA figures. So a failed span with a failed child is
not an error of its own: it keeps its role's event type (`agent_run`, `decision`, `llm_call`,
`tool_call`, ...) and its message moves from `output_data.error` to `output_data.child_error`,
which the tree and explain show as "failed because a child failed". The deepest failed span
is the one error.

Children end, and are exported, before their parents, so when a failed span is mapped its
failed children are either in the same request or stored already (looked up by the parent's
event id). A parent stored before a failed child arrives (an exporter that sends spans out of
order across requests) keeps its error.

A session's status is `error` when its last root span failed, whether by itself or because of a
child (lifecycle.py reads both), so the status and triage agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from obsctl.services.otlp.mapping import AGENT, ROLE_EVENT_TYPES, ROOT_AGENT_TYPE, TOOL, span_role
from obsctl.services.otlp.wire import SpanRecord
from obsctl.store import Store
from obsctl.vocabulary import is_error_event

CHILD_ERROR = "child_error"
# Fields of a failure that belong to the deepest span (the message moves to child_error).
_FAILURE_FIELDS = ("error", "exception_type", "stacktrace")


def failed(event: dict) -> bool:
    return is_error_event(event["event_type"], event.get("output_data"), event.get("tool_call"))


def count_failures_once(store: Store, records: Sequence[SpanRecord], raw: list[dict]) -> int:
    """Turn the failed spans of a request that have a failed child (in the request or stored)
    into "failed because a child failed"; returns how many. `raw` is changed in place."""
    failing = {event["event_id"] for event in raw if failed(event)}
    if not failing:
        return 0
    with_failed_child = {event["parent_id"] for event in raw
                         if event["event_id"] in failing and event.get("parent_id") in failing}
    unsure = sorted(failing - with_failed_child)
    if unsure:
        with_failed_child |= store.otlp.failed_children(unsure) & failing
    changed = 0
    for record, event in zip(records, raw):
        if event["event_id"] in with_failed_child:
            _demote(record, event)
            changed += 1
    return changed


def _demote(record: SpanRecord, event: dict) -> None:
    role = span_role(record)
    event_type = ROLE_EVENT_TYPES.get(role, "generic")
    if role == AGENT and not record.parent_span_id:
        event_type = ROOT_AGENT_TYPE
    event["event_type"] = event_type
    output = dict(event.get("output_data") or {})
    message = output.get("error") or "failed"
    for key in _FAILURE_FIELDS:
        output.pop(key, None)
    output[CHILD_ERROR] = message
    event["output_data"] = output
    if role == TOOL and type(event.get("tool_call")) is dict:
        event["tool_call"] = {k: v for k, v in event["tool_call"].items() if k != "error"}
