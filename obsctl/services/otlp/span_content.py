"""What a span says it took in and gave back: its input_data, output_data and tool_call, from
whichever convention set them (GenAI messages, OpenInference values, the Vercel AI SDK's,
Traceloop's and Langfuse's attributes, or events on the span); services/otlp/mapping.py
builds the event around them."""

from __future__ import annotations

from typing import Any

from obsctl.services.otlp.attributes import parse_json
from obsctl.services.otlp.wire import SpanRecord

TOOL = "tool"  # the role of a tool span (services/otlp/mapping.py)


def _as_object(value: Any, key: str) -> dict:
    """input_data/output_data must be objects: a JSON object is used as is, else wrapped."""
    value = parse_json(value)
    return value if type(value) is dict else {key: value}


def _event_attribute(span: SpanRecord, event_name: str, key: str) -> Any:
    """Content recorded on a span event (older GenAI instrumentations do that)."""
    for name, attributes in span.events:
        if name == event_name and attributes.get(key) is not None:
            return attributes[key]
    return None


def span_input(span: SpanRecord, prompts: list) -> dict | None:
    attrs = span.attributes
    data = None
    if attrs.get("gen_ai.input.messages") is not None:
        data = _as_object(attrs["gen_ai.input.messages"], "messages")
    elif prompts and not attrs.get("gen_ai.prompt"):
        data = {"messages": prompts}
    elif attrs.get("input.value") is not None:
        data = _as_object(attrs["input.value"], "value")
    elif attrs.get("gen_ai.prompt") is not None:
        data = _as_object(attrs["gen_ai.prompt"], "prompt")
    elif prompts:
        data = {"messages": prompts}
    elif attrs.get("traceloop.entity.input") is not None:
        data = _as_object(attrs["traceloop.entity.input"], "value")
    elif attrs.get("langfuse.observation.input") is not None:
        data = _as_object(attrs["langfuse.observation.input"], "value")
    elif attrs.get("ai.prompt.messages") is not None:
        data = _as_object(attrs["ai.prompt.messages"], "messages")
    elif attrs.get("ai.prompt") is not None:
        data = _as_object(attrs["ai.prompt"], "prompt")
    else:
        prompt = _event_attribute(span, "gen_ai.content.prompt", "gen_ai.prompt")
        if prompt is not None:
            data = _as_object(prompt, "prompt")
    instructions = attrs.get("gen_ai.system_instructions")
    if instructions is not None:
        data = {**(data or {}), "system_instructions": parse_json(instructions)}
    return data


def span_output(span: SpanRecord, completions: list) -> tuple[dict | None, str | None]:
    """output_data and the reasoning text found in the output messages, if any."""
    attrs = span.attributes
    data = None
    reasoning = None
    if attrs.get("gen_ai.output.messages") is not None:
        data = _as_object(attrs["gen_ai.output.messages"], "messages")
        reasoning = _reasoning(data.get("messages"))
    elif completions and not attrs.get("gen_ai.completion"):
        data = {"messages": completions}
    elif attrs.get("output.value") is not None:
        data = _as_object(attrs["output.value"], "value")
    elif attrs.get("gen_ai.completion") is not None:
        data = _as_object(attrs["gen_ai.completion"], "completion")
    elif completions:
        data = {"messages": completions}
    elif attrs.get("traceloop.entity.output") is not None:
        data = _as_object(attrs["traceloop.entity.output"], "value")
    elif attrs.get("langfuse.observation.output") is not None:
        data = _as_object(attrs["langfuse.observation.output"], "value")
    elif attrs.get("final_result") is not None:  # Pydantic AI's agent run: its output
        data = _as_object(attrs["final_result"], "text")
    elif any(attrs.get(k) is not None for k in _VERCEL_OUTPUT):
        data = {name: parse_json(attrs[k]) for k, name in _VERCEL_OUTPUT.items() if attrs.get(k) is not None}
    else:
        completion = _event_attribute(span, "gen_ai.content.completion", "gen_ai.completion")
        if completion is not None:
            data = _as_object(completion, "completion")
    return data, reasoning


# The Vercel AI SDK's response attributes and the output_data keys they become.
_VERCEL_OUTPUT = {"ai.response.text": "text", "ai.response.toolCalls": "tool_calls",
                  "ai.response.object": "object"}


def _reasoning(messages: Any) -> str | None:
    """Reasoning parts of GenAI output messages: [{"parts": [{"type": "reasoning", ...}]}]."""
    if type(messages) is not list:
        return None
    texts = []
    for message in messages:
        parts = message.get("parts") if type(message) is dict else None
        if type(parts) is not list:
            continue
        for part in parts:
            if type(part) is dict and part.get("type") == "reasoning" and type(part.get("content")) is str:
                texts.append(part["content"])
    return "\n\n".join(texts) or None


def span_tool_call(span: SpanRecord, role: str | None) -> dict | None:
    attrs = span.attributes
    name = attrs.get("gen_ai.tool.name") or attrs.get("tool.name") or attrs.get("ai.toolCall.name")
    if name is None and role == TOOL:
        name = attrs.get("traceloop.entity.name") or span.name or None
    if name is None:
        return None
    call: dict[str, Any] = {"name": name if type(name) is str else str(name)}
    # OpenInference's `tool.parameters` is the tool's JSON schema, never the arguments of a call.
    arguments = _first_present(attrs, ("gen_ai.tool.call.arguments", "ai.toolCall.args"))
    result = _first_present(attrs, ("gen_ai.tool.call.result", "ai.toolCall.result"))
    if role == TOOL:
        # Tool spans of OpenInference and OpenLLMetry carry their input and output generically.
        if arguments is None:
            arguments = _first_present(attrs, ("input.value", "traceloop.entity.input",
                                               "langfuse.observation.input"))
            arguments = _keyword_arguments(parse_json(arguments))
        if result is None:
            result = _first_present(attrs, ("output.value", "traceloop.entity.output",
                                            "langfuse.observation.output"))
    if arguments is not None:
        call["input"] = parse_json(arguments)
    if result is not None:
        call["output"] = parse_json(result)
    call_id = attrs.get("gen_ai.tool.call.id") or attrs.get("ai.toolCall.id")
    if call_id is not None:
        call["id"] = call_id
    return call


def _first_present(attrs: dict, keys: tuple[str, ...]) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) is not None), None)


def _keyword_arguments(value: Any) -> Any:
    """A decorated Python function's call as the SDKs record it, `{"args": [], "kwargs": {...}}`,
    is its keyword arguments: what the model asked the tool for. Anything else is unchanged."""
    if (type(value) is dict and value.keys() == {"args", "kwargs"} and value["args"] == []
            and type(value["kwargs"]) is dict):
        return value["kwargs"]
    return value
