"""What LangChain's serialisations mean, as OpenInference records them (tests/data/otlp/langchain/).

- A tool's result is the ToolMessage LangChain made of it, serialised: `{"type": "tool", "data":
  {"content", "tool_call_id", "status", ...}}`, or the constructor form `{"lc": 1, "type":
  "constructor", "id": [..., "ToolMessage"], "kwargs": {...}}`. The result is its `content`; a
  `status` of `error` is a tool that failed and whose error LangChain handed to the model (the
  span itself is OK): the tool call's error.
- A tool span's `input.value` is the bare argument when the tool takes one (`"Paris"`); the
  arguments the model asked for are on the parent `tools` span's `input.value`, a list of
  `{"name", "args", "id", "type": "tool_call"}`. The tool span takes the `args` of its call.
"""

from __future__ import annotations

from typing import Any

from obsctl.services.otlp.attributes import parse_json
from obsctl.services.otlp.wire import SpanRecord


def tool_message(value: Any) -> dict | None:
    """The fields of a serialised LangChain ToolMessage (content, status, tool_call_id), or None."""
    if type(value) is not dict:
        return None
    if value.get("type") == "tool" and type(value.get("data")) is dict:
        fields = value["data"]
    elif (value.get("lc") == 1 and type(value.get("id")) is list and value["id"]
          and value["id"][-1] == "ToolMessage" and type(value.get("kwargs")) is dict):
        fields = value["kwargs"]
    else:
        return None
    return fields if "content" in fields else None


def read_tool_message(event: dict) -> None:
    """A tool span's event whose output is a ToolMessage: its result is the message's content,
    and a status of `error` makes it the call's error (event changed in place)."""
    call = event.get("tool_call")
    if type(call) is not dict:
        return
    message = tool_message(call.get("output"))
    if message is None:
        return
    content = message["content"]
    call["output"] = content
    output: dict[str, Any] = {"value": content}
    if message.get("status") == "error":
        error = content if type(content) is str and content else "the tool reported an error"
        call["error"] = error
        output["error"] = error
    if message.get("tool_call_id") is not None:
        call.setdefault("id", message["tool_call_id"])
    # A failure of the span itself (an exception) stays what it was.
    failed = {k: v for k, v in (event.get("output_data") or {}).items() if k in _SPAN_ERROR_KEYS}
    event["output_data"] = {**output, **failed}


# What mapping._error puts in output_data when the span failed.
_SPAN_ERROR_KEYS = ("error", "exception_type", "stacktrace")


def tool_arguments(records: list[SpanRecord], raw: list[dict]) -> None:
    """Tool events whose input is not an object take the arguments of their call from the parent
    span's list of tool calls (LangGraph's `tools` node), matched by call id, else by name."""
    by_span = {record.span_id: record for record in records}
    for record, event in zip(records, raw):
        call = event.get("tool_call")
        if type(call) is not dict or type(call.get("input")) is dict or not record.parent_span_id:
            continue
        parent = by_span.get(record.parent_span_id)
        listed = parse_json(parent.attributes.get("input.value")) if parent is not None else None
        if type(listed) is not list:
            continue
        calls = [c for c in listed if type(c) is dict and c.get("type") == "tool_call" and type(c.get("args")) is dict]
        match = next((c for c in calls if call.get("id") is not None and c.get("id") == call["id"]), None)
        if match is None:
            named = [c for c in calls if c.get("name") == call.get("name")]
            match = named[0] if len(named) == 1 else None
        if match is not None:
            call["input"] = match["args"]
            event["input_data"] = match["args"]
