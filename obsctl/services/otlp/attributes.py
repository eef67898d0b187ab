"""Reading a span's attributes: the content ones set apart from those kept in metadata, the
messages that OpenLLMetry and OpenInference flatten into numbered attributes put back
together, and JSON text read as its value (services/otlp/mapping.py builds the event)."""

from __future__ import annotations

from typing import Any

import orjson

# Attributes whose content goes to input_data, output_data or tool_call; they are not
# repeated in the event's metadata.
_CONTENT_KEYS = frozenset({
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
    "input.value", "output.value", "gen_ai.prompt", "gen_ai.completion",
    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
    "ai.toolCall.args", "ai.toolCall.result", "ai.prompt.messages", "ai.prompt", "ai.response.text",
    "ai.response.toolCalls", "ai.response.object", "final_result",
    "traceloop.entity.input", "traceloop.entity.output",
    "langfuse.observation.input", "langfuse.observation.output",
})
# OpenLLMetry flattens messages: gen_ai.prompt.0.role, gen_ai.prompt.0.content, ...
_PROMPT_PREFIX = "gen_ai.prompt."
_COMPLETION_PREFIX = "gen_ai.completion."
# OpenInference flattens them deeper: llm.input_messages.0.message.contents.0.message_content.text
_OI_INPUT_PREFIX = "llm.input_messages."
_OI_OUTPUT_PREFIX = "llm.output_messages."
# OpenInference's wrapper levels inside a flattened message, left out of the nested value.
_OI_WRAPPERS = frozenset({"message", "message_content", "tool_call"})
_FLATTENED_PREFIXES = (_PROMPT_PREFIX, _COMPLETION_PREFIX, _OI_INPUT_PREFIX, _OI_OUTPUT_PREFIX)
_NONE: list = []  # no flattened messages (never changed)
# Parsed JSON deeper than this could not be written back by the JSON encoder.
_MAX_BRACKETS = 200


def split_attributes(attrs: dict) -> tuple[dict, list, list]:
    """(attributes kept in metadata, flattened prompt messages, flattened completions)."""
    other: dict = {}
    prompts: dict[int, dict] = {}
    completions: dict[int, dict] = {}
    for key, value in attrs.items():
        if key in _CONTENT_KEYS:
            continue
        if key.startswith(_FLATTENED_PREFIXES):
            if key.startswith(_PROMPT_PREFIX):
                if _put_indexed(prompts, key[len(_PROMPT_PREFIX):], value):
                    continue
            elif key.startswith(_COMPLETION_PREFIX):
                if _put_indexed(completions, key[len(_COMPLETION_PREFIX):], value):
                    continue
            elif key.startswith(_OI_INPUT_PREFIX):
                if _put_nested(prompts, key[len(_OI_INPUT_PREFIX):], value):
                    continue
            elif _put_nested(completions, key[len(_OI_OUTPUT_PREFIX):], value):
                continue
        other[key] = value
    if not prompts and not completions:
        return other, _NONE, _NONE
    return (other, [_listed(prompts[i]) for i in sorted(prompts)],
            [_listed(completions[i]) for i in sorted(completions)])


def _put_nested(messages: dict, rest: str, value: Any) -> bool:
    """Put OpenInference's `<n>.message.<path>` into message n as a nested value: numbered
    segments become list items, the wrapper levels (`message`, `message_content`, `tool_call`)
    are left out: `0.message.tool_calls.0.tool_call.function.name` -> tool_calls[0].function.name."""
    parts = rest.split(".")
    if not parts[0].isdigit() or len(parts) < 2:
        return False
    node = messages.setdefault(int(parts[0]), {})
    path = [int(p) if p.isdigit() else p for i, p in enumerate(parts[1:], start=1)
            if not (p in _OI_WRAPPERS and (i == 1 or parts[i - 1].isdigit()))]
    if not path or type(node) is not dict:
        return False
    for step in path[:-1]:
        child = node.get(step)
        if type(child) is not dict:
            child = node[step] = {}
        node = child
    node[path[-1]] = value
    return True


def _listed(value: Any) -> Any:
    """A nested value of _put_nested with its numbered levels made lists, in order."""
    if type(value) is not dict:
        return value
    if value and all(type(k) is int for k in value):
        return [_listed(value[k]) for k in sorted(value)]
    return {k: _listed(v) for k, v in value.items()}


def _put_indexed(messages: dict, rest: str, value: Any) -> bool:
    index, _, field = rest.partition(".")
    if not index.isdigit() or not field:
        return False
    messages.setdefault(int(index), {})[field] = value
    return True


def parse_json(value: Any) -> Any:
    """A JSON string as its value (when it is JSON), anything else unchanged. A JSON string
    literal is read too, once (Traceloop encodes a task's return value as JSON even when it is
    already JSON text or a plain string: `"\"sunny\""`)."""
    if type(value) is not str:
        return value
    text = value.lstrip()
    if text[:1] == '"' and text.rstrip()[-1:] == '"':
        try:
            inner = orjson.loads(text)
        except orjson.JSONDecodeError:
            return value
        return parse_json_text(inner) if type(inner) is str else value
    return parse_json_text(value)


def parse_json_text(value: str) -> Any:
    text = value.lstrip()
    if text[:1] not in ("{", "["):
        return value
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return value
    if text.count("[") + text.count("{") > _MAX_BRACKETS:
        try:
            orjson.dumps(parsed)
        except orjson.JSONEncodeError:
            return value
    return parsed
