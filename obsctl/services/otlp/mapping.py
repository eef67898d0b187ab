"""Mapping OpenTelemetry spans to obsctl events: the attribute table of spec OTLP.md.

Attribute names of several conventions are read, first present wins: the OpenTelemetry
GenAI semantic conventions (current and deprecated names), OpenInference (Phoenix),
OpenLLMetry/Traceloop, Langfuse, Laminar and MLflow. Attributes are read from the span,
falling back to the resource. The session id is resolved per trace by the ingest service
(obsctl/services/otlp.py); everything else about an event comes from its own span.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from obsctl.services.otlp.attributes import split_attributes
from obsctl.services.otlp.langchain import read_tool_message
from obsctl.services.otlp.span_content import TOOL, span_input, span_output, span_tool_call
from obsctl.services.otlp.token_counts import (  # noqa: F401 (USAGE_FIELDS, stored_usage_parts: re-exported)
    TOKENS_IN_KEYS,
    TOKENS_OUT_KEYS,
    USAGE_FIELDS,
    count,
    langfuse_usage,
    stored_usage_parts,
    usage_parts,
)
from obsctl.services.otlp.wire import SpanRecord

SESSION_KEYS = (
    "session.id",
    "gen_ai.conversation.id",
    "langfuse.session.id",
    "ai.telemetry.metadata.sessionId",
    "traceloop.association.properties.session_id",
    "lmnr.association.properties.session_id",
    "mlflow.trace.session",
    "session_id",
    "thread_id",
    "conversation_id",
)
MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name",
              "langfuse.observation.model.name", "ai.response.model", "ai.model.id")
LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "embeddings"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent", "invoke_workflow"})
# The Langfuse SDKs' observation types (`langfuse.observation.type`) and the role each plays.
LANGFUSE_ROLES = {"generation": "llm", "embedding": "llm", "tool": "tool", "agent": "agent",
                  "chain": "agent"}
# The Vercel AI SDK's operations (`ai.operationId`): a call of the model by the SDK's function
# (`ai.generateText.doGenerate`, ...), a tool run, and the function itself, which runs the loop.
VERCEL_LLM_SUFFIXES = (".doGenerate", ".doStream", ".doEmbed")
VERCEL_AGENT_OPERATIONS = frozenset({"ai.generateText", "ai.streamText", "ai.generateObject",
                                     "ai.streamObject"})
LLM, AGENT = "llm", "agent"
ROLE_EVENT_TYPES: dict[str | None, str] = {TOOL: "tool_call", LLM: "llm_call", AGENT: "decision"}
# The event type of a root agent span (an agent, chain or workflow span with no parent).
ROOT_AGENT_TYPE = "agent_run"
SPAN_KIND_NAMES = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer",
                   5: "consumer"}
STATUS_ERROR = 2
# The metadata key holding token usage a span reported but the session totals do not count
# (it is counted on the model-call spans under it).
UNCOUNTED_USAGE = "uncounted_usage"



class Attributed(Protocol):
    """A decoded span or log record: what the attribute readers below look in."""

    lookup: dict  # its attributes over its resource's


def attr(span: Attributed, key: str) -> Any:
    """An attribute of the span, falling back to the span's resource."""
    return span.lookup.get(key)


def first_attr(span: SpanRecord, keys: tuple[str, ...]) -> Any:
    get = span.lookup.get
    for key in keys:
        value = get(key)
        if value is not None and value != "":
            return value
    return None


def _identifier(value: Any) -> str | None:
    """Ids and names as text; integers (a numeric thread id) are accepted too."""
    if type(value) is str:
        return value or None
    if type(value) is int:
        return str(value)
    return None


def explicit_session(span: Attributed) -> str | None:
    """The session id the span (or its resource) names, if any."""
    get = span.lookup.get
    for key in SESSION_KEYS:
        value = get(key)
        if value is not None:
            value = _identifier(value)
            if value is not None:
                return value
    return None


def explicit_agent(span: Attributed) -> str | None:
    """An agent name set by the instrumentation, as opposed to the service name."""
    name = _identifier(attr(span, "gen_ai.agent.name")) or _identifier(attr(span, "agent.name"))
    if name is None and attr(span, "traceloop.span.kind") == "agent":
        name = _identifier(attr(span, "traceloop.entity.name"))
    return name


def session_agent(span: SpanRecord, role: str | None = None) -> str | None:
    """The agent name a span gives its session: an explicit agent name, or for a root agent
    span (an agent invocation without a parent) the name of the agent or workflow it runs:
    OpenLLMetry's workflow name, or an OpenInference AGENT span's own name."""
    name = explicit_agent(span)
    if name is not None or span.parent_span_id:
        return name
    if (role or span_role(span)) != AGENT:
        return None
    get = span.lookup.get
    if get("traceloop.span.kind") == "workflow":
        return _identifier(get("traceloop.entity.name")) or _identifier(get("traceloop.workflow.name"))
    kind = get("openinference.span.kind")
    if (type(kind) is str and kind.upper() == "AGENT") or get("langfuse.observation.type") == "agent":
        return span.name or None
    if get("ai.operationId") in VERCEL_AGENT_OPERATIONS:
        return _identifier(get("ai.telemetry.functionId"))
    return None


def service_name(span: Attributed) -> str | None:
    return _identifier(attr(span, "service.name"))


def span_role(span: SpanRecord) -> str | None:
    """tool, llm or agent; explicit operation names and span kinds win over a model hint."""
    return role_from(span.lookup.get)


def role_from(get) -> str | None:
    """span_role from an attribute getter (a span's lookup, or the attributes an event kept
    in its metadata)."""
    operation = get("gen_ai.operation.name")
    oi_kind = get("openinference.span.kind")
    oi_kind = oi_kind.upper() if type(oi_kind) is str else None
    tl_kind = get("traceloop.span.kind")
    lf_role = LANGFUSE_ROLES.get(get("langfuse.observation.type")) or _vercel_role(get("ai.operationId"))
    if operation == "execute_tool" or oi_kind == "TOOL" or tl_kind == "tool" or lf_role == TOOL:
        return TOOL
    if operation in LLM_OPERATIONS or oi_kind in ("LLM", "EMBEDDING") or lf_role == LLM:
        return LLM
    if (operation in AGENT_OPERATIONS or oi_kind in ("AGENT", "CHAIN") or tl_kind in ("agent", "workflow")
            or lf_role == AGENT):
        return AGENT
    if get("gen_ai.request.model") is not None:
        return LLM
    return None


def is_run_span(span: SpanRecord) -> bool:
    """Whether a span is part of an agent run: an agent span (not a chain: LlamaIndex parses
    documents in CHAIN spans), a tool call, or a model call other than an embedding (indexing
    and start-up embeddings are background work)."""
    role = span_role(span)
    get = span.lookup.get
    if role == TOOL:
        return True
    if role == AGENT:
        kind = get("openinference.span.kind")
        return not ((type(kind) is str and kind.upper() == "CHAIN") or get("langfuse.observation.type") == "chain")
    if role != LLM:
        return False
    kind = get("openinference.span.kind")
    operation = get("ai.operationId")
    return not (get("gen_ai.operation.name") == "embeddings" or (type(kind) is str and kind.upper() == "EMBEDDING")
                or get("langfuse.observation.type") == "embedding"
                or (type(operation) is str and operation.endswith(".doEmbed")))


def _vercel_role(operation: Any) -> str | None:
    if type(operation) is not str or not operation.startswith("ai."):
        return None
    if operation == "ai.toolCall":
        return TOOL
    if operation.endswith(VERCEL_LLM_SUFFIXES):
        return LLM
    return AGENT if operation in VERCEL_AGENT_OPERATIONS else None


# ISO text of whole seconds already formatted: the spans of a request share few seconds.
_ISO_SECONDS: dict[int, str] = {}
_ISO_SECONDS_KEPT = 4096


def ns_to_iso(ns: int) -> str:
    """Unix nanoseconds as obsctl's normalised timestamp text (UTC, milliseconds, Z)."""
    seconds, rest = divmod(ns, 1_000_000_000)
    prefix = _ISO_SECONDS.get(seconds)
    if prefix is None:
        t = time.gmtime(seconds)
        prefix = (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:"
                  f"{t.tm_sec:02d}.")
        if len(_ISO_SECONDS) >= _ISO_SECONDS_KEPT:
            _ISO_SECONDS.clear()
        _ISO_SECONDS[seconds] = prefix
    return f"{prefix}{rest // 1_000_000:03d}Z"


def span_to_event(span: SpanRecord, session_id: str) -> dict:
    """The raw event (as POST /events takes it) for one span of session `session_id`."""
    role = span_role(span)
    get = span.lookup.get
    other, prompts, completions = split_attributes(span.attributes)
    trace_id = span.trace_id
    event_type = ROLE_EVENT_TYPES.get(role, "generic")
    if role == AGENT and not span.parent_span_id:
        event_type = ROOT_AGENT_TYPE  # the run itself, the root of the session's tree
    event: dict[str, Any] = {
        "event_id": f"{trace_id}:{span.span_id}",
        "session_id": session_id,
        "event_type": event_type,
        "timestamp": ns_to_iso(span.start_ns),
    }
    if span.parent_span_id:
        event["parent_id"] = f"{trace_id}:{span.parent_span_id}"
    if span.end_ns >= span.start_ns:
        event["duration_ms"] = (span.end_ns - span.start_ns) / 1e6
    agent = session_agent(span, role) or _identifier(get("service.name"))
    if agent is not None:
        event["agent_name"] = agent
    for name, keys in _FIRST_OF:
        for key in keys:
            value = get(key)
            if value is not None and value != "":
                event[name] = count(value) if name != "model" else value
                break
    if "tokens_in" not in event and "tokens_out" not in event:
        event.update(langfuse_usage(get("langfuse.observation.usage_details")))
    else:
        usage_parts(event, get)
    uncounted = None
    if role == AGENT and ("tokens_in" in event or "tokens_out" in event):
        # An agent, chain or workflow span reports the usage of the model calls under it:
        # kept with the span, counted only on those calls (see usage.py).
        uncounted = {k: event.pop(k) for k in USAGE_FIELDS if k in event}

    input_data = span_input(span, prompts)
    output_data, reasoning = span_output(span, completions)
    tool_call = span_tool_call(span, role)
    if (span.status_code == STATUS_ERROR or span.events or get("error.type") not in (None, "")
            or get("langfuse.observation.level") == "ERROR"):
        error = _error(span)
        if error is not None:
            event["event_type"] = "tool_error" if role == TOOL else "error"
            output_data = {**(output_data or {}), **error}
    if input_data is not None:
        event["input_data"] = input_data
    if output_data is not None:
        event["output_data"] = output_data
    if tool_call is not None:
        event["tool_call"] = tool_call
    if reasoning:
        event["decision_trace"] = {"reasoning": reasoning}
    if role == TOOL and tool_call is not None:
        read_tool_message(event)
    event["metadata"] = _metadata(span, other)
    if uncounted:
        event["metadata"][UNCOUNTED_USAGE] = uncounted
    return event


# Event fields read from the first attribute present of several conventions.
_FIRST_OF = (("model", MODEL_KEYS), ("tokens_in", TOKENS_IN_KEYS), ("tokens_out", TOKENS_OUT_KEYS))


def _error(span: SpanRecord) -> dict | None:
    """output_data error fields when the span failed: status ERROR, error.type or an exception."""
    exception = next((a for name, a in span.events if name == "exception"), None)
    error_type = span.attributes.get("error.type")
    langfuse_error = span.attributes.get("langfuse.observation.level") == "ERROR"
    if span.status_code != STATUS_ERROR and exception is None and error_type in (None, "") and not langfuse_error:
        return None
    message = span.status_message
    if not message and langfuse_error:
        message = _identifier(span.attributes.get("langfuse.observation.status_message")) or ""
    fields: dict[str, Any] = {}
    if exception is not None:
        exc_type, exc_message = exception.get("exception.type"), exception.get("exception.message")
        if not message:
            message = f"{exc_type}: {exc_message}" if exc_type and exc_message else (exc_message or exc_type)
        if exc_type:
            fields["exception_type"] = exc_type
        if exception.get("exception.stacktrace"):
            fields["stacktrace"] = exception["exception.stacktrace"]
    if not message and error_type == "tool_error":
        # The MCP SDK's tool span when the tool answered a result marked isError: the call
        # worked, the tool said it failed (its text is not on the span).
        message = "the tool returned an error result" + (" (MCP isError)" if span.attributes.get("mcp.method.name")
                                                         else "")
    if not message and error_type not in (None, ""):
        message = str(error_type)
    return {"error": str(message) if message else "span status ERROR", **fields}


def _metadata(span: SpanRecord, other: dict) -> dict:
    """Where the event came from: span name, ids, kind, scope and the remaining attributes."""
    meta: dict[str, Any] = {"span_name": span.name, "trace_id": span.trace_id, "span_id": span.span_id}
    if span.parent_span_id:
        meta["parent_span_id"] = span.parent_span_id
    if span.kind:
        meta["span_kind"] = SPAN_KIND_NAMES.get(span.kind, span.kind)
    if span.scope:
        meta["scope"] = span.scope
    if other:
        meta["attributes"] = other
    events = [{"name": name, "attributes": a} for name, a in span.events if name != "exception"]
    if events:
        meta["span_events"] = events
    return meta
