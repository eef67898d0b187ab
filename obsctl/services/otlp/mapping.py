"""Mapping OpenTelemetry spans to obsctl events: the attribute table of spec OTLP.md.

Attribute names of several conventions are read, first present wins: the OpenTelemetry
GenAI semantic conventions (current and deprecated names), OpenInference (Phoenix),
OpenLLMetry/Traceloop, Langfuse, Laminar and MLflow. Attributes are read from the span,
falling back to the resource. The session id is resolved per trace by the ingest service
(obsctl/services/otlp.py); everything else about an event comes from its own span.
"""

from __future__ import annotations

import time
from typing import Any

from obsctl.services.otlp.attributes import parse_json, split_attributes
from obsctl.services.otlp.span_content import TOOL, span_input, span_output, span_tool_call
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
LLM, AGENT = "llm", "agent"
ROLE_EVENT_TYPES = {TOOL: "tool_call", LLM: "llm_call", AGENT: "decision"}
# The event type of a root agent span (an agent, chain or workflow span with no parent).
ROOT_AGENT_TYPE = "agent_run"
SPAN_KIND_NAMES = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer",
                   5: "consumer"}
STATUS_ERROR = 2
# The metadata key holding token usage a span reported but the session totals do not count
# (it is counted on the model-call spans under it).
UNCOUNTED_USAGE = "uncounted_usage"



def attr(span: SpanRecord, key: str) -> Any:
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


def explicit_session(span: SpanRecord) -> str | None:
    """The session id the span (or its resource) names, if any."""
    get = span.lookup.get
    for key in SESSION_KEYS:
        value = get(key)
        if value is not None:
            value = _identifier(value)
            if value is not None:
                return value
    return None


def explicit_agent(span: SpanRecord) -> str | None:
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


def service_name(span: SpanRecord) -> str | None:
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
                event[name] = _count(value) if name != "model" else value
                break
    if "tokens_in" not in event and "tokens_out" not in event:
        event.update(_langfuse_usage(get("langfuse.observation.usage_details")))
    else:
        _usage_parts(event, get)
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
    event["metadata"] = _metadata(span, other)
    if uncounted:
        event["metadata"][UNCOUNTED_USAGE] = uncounted
    return event


# Event fields read from the first attribute present of several conventions.
_FIRST_OF = (("model", MODEL_KEYS), ("tokens_in", TOKENS_IN_KEYS), ("tokens_out", TOKENS_OUT_KEYS))


def _usage_parts(event: dict, get) -> None:
    """The cache read, cache write and reasoning parts of a span's token counts, first present
    key of each wins (0 is left out: nothing to price apart)."""
    for name, keys in _PARTS_OF:
        for key in keys:
            value = get(key)
            if value is not None and value != "":
                value = _count(value)
                if value:
                    event[name] = value
                break
    _whole_counts(event)


_PARTS_OF = (("tokens_cache_read", CACHE_READ_KEYS), ("tokens_cache_write", CACHE_WRITE_KEYS),
             ("tokens_reasoning", REASONING_KEYS))


def _whole_counts(event: dict) -> None:
    """Make the input and output counts hold their parts. The conventions count cache tokens
    in the input (and reasoning in the output); a client that reports them beside it (more
    cached tokens than input tokens: Anthropic's own counting) has them added."""
    for whole, parts in (("tokens_in", ("tokens_cache_read", "tokens_cache_write")),
                         ("tokens_out", ("tokens_reasoning",))):
        counted = [event[p] for p in parts if p in event]
        if not counted or any(type(c) is not int for c in counted):
            continue  # nothing to add, or a bad count that validation reports
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
        _usage_parts(probe, get)
    else:
        found = _langfuse_usage(get("langfuse.observation.usage_details"))
        probe.update({name: found[name] for name, _ in _PARTS_OF if name in found})
        _whole_counts(probe)
    parts = tuple(probe.get(name) for name, _ in _PARTS_OF)
    if not any(parts) or any(probe.get(k) != v for k, v in counts.items()):
        return None
    return parts


def _langfuse_usage(details: Any) -> dict:
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
            found[name] = _count(value)
    for name, paths in _LANGFUSE_PARTS:
        for path in paths:
            value: Any = details
            for key in path:
                value = value.get(key) if type(value) is dict else None
            if value is not None:
                value = _count(value)
                if value:
                    found[name] = value
                break
    _whole_counts(found)
    return found


def _count(value: Any) -> Any:
    """A token count as an integer; anything else is passed on for validation to report."""
    if type(value) is float and value.is_integer():
        return int(value)
    if type(value) is str and value.isdigit():
        return int(value)
    return value


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
