"""Messages as people read them: (role, text) turns, whatever convention stored them.

Events keep their messages as the source sent them (`input_data.messages`,
`output_data.messages`): OpenTelemetry GenAI parts (`{"role", "parts": [{"type": "text",
"content"}, {"type": "tool_call", "name", "arguments"}, ...]}`), OpenAI-style messages
(`{"role", "content", "tool_calls": [{"function": {"name", "arguments"}}]}`), OpenInference's
(`contents: [{"type", "text"}]`, `tool_call_id`), the Vercel AI SDK's (`content: [{"type":
"text", "text"}, {"type": "tool-call", "toolName", "input"}]`), Anthropic blocks (`tool_use`,
`tool_result`) and LangChain's serialisation (`{"type": "human", "data": {"content"}}`). `turns`
reads each into one role and one line of text: the words, or the tool call it makes
(`→ get_weather({"city": "Paris"})`), or the tool result it carries.
"""

from __future__ import annotations

import contextlib
from typing import Any

from obsctl.jsonutil import dumps

# LangChain's message types and the roles they are.
_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool",
                    "function": "tool", "chat": "user"}
_TEXT_TYPES = ("text", "input_text", "output_text")
_CALL_TYPES = ("tool_call", "tool-call", "tool_use", "function_call")
_RESULT_TYPES = ("tool_call_response", "tool-result", "tool_result", "function_call_output")


def messages_of(data: Any) -> list | None:
    """The message list of an input_data/output_data object, if it holds one: its `messages`,
    a single message (an object with a `role`, as Langfuse records a reply), or a reply with
    `tool_calls` (and maybe `text`: the Vercel AI SDK's)."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("messages"), list) and data["messages"]:
        return data["messages"]
    if isinstance(data.get("role"), str):
        return [data]
    if isinstance(data.get("tool_calls"), list) and data["tool_calls"]:
        return [{"role": "assistant", "content": data.get("text"), "tool_calls": data.get("tool_calls")}]
    return None


def turns(messages: list) -> list[tuple[str, str]]:
    """(role, text) of each message that says something."""
    found = []
    for message in messages:
        turn = _turn(message)
        if turn is not None and turn[1]:
            found.append(turn)
    return found


def _turn(message: Any) -> tuple[str, str] | None:
    if isinstance(message, str):
        return "message", message
    if not isinstance(message, dict):
        return None
    if isinstance(message.get("data"), dict) and message.get("type") in _LANGCHAIN_ROLES:
        return _turn({**message["data"], "role": _LANGCHAIN_ROLES[message["type"]]})
    role = str(message.get("role") or message.get("type") or "message")
    pieces: list[str] = []
    for key in ("content", "contents", "parts"):
        pieces += _pieces(message.get(key))
    for call in message.get("tool_calls") or ():
        pieces.append(_call_text(call))
    if message.get("function_call"):
        pieces.append(_call_text(message["function_call"]))
    # A call given both as a tool_calls entry and as a content block is said once.
    return role, " ".join(dict.fromkeys(p for p in pieces if p))


def _pieces(content: Any) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return [dumps(content)]
    pieces = []
    for part in content:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, dict):
            pieces.append(_part_text(part))
    return pieces


def _part_text(part: dict) -> str:
    kind = part.get("type")
    if kind in _CALL_TYPES or (kind is None and "function" in part):
        return _call_text(part)
    if kind in _RESULT_TYPES:
        result = next((part[k] for k in ("response", "output", "result", "content") if k in part), None)
        return "← " + (result if isinstance(result, str) else dumps(result))
    for key in ("text", "content"):
        if isinstance(part.get(key), str):
            return part[key]
    if kind in _TEXT_TYPES:
        return ""
    return f"[{kind}]" if kind else dumps(part)


def _call_text(call: Any) -> str:
    """`→ name(arguments)` of a tool call in any of the shapes above."""
    if not isinstance(call, dict):
        return f"→ {call}"
    name, arguments = _name_and_arguments(call)
    shown = "" if arguments is None else arguments if isinstance(arguments, str) else dumps(arguments)
    return f"→ {name}({shown})"


def _name_and_arguments(call: dict) -> tuple[str, Any]:
    """The tool's name and the arguments as given, in any of the shapes above."""
    inner = call.get("function")
    function: dict = inner if isinstance(inner, dict) else call
    name = function.get("name") or call.get("toolName") or call.get("name") or "tool"
    arguments = next((function[k] for k in ("arguments", "input", "args") if k in function),
                     next((call[k] for k in ("arguments", "input", "args") if k in call), None))
    return str(name), arguments


# Role names as the sources spell them -> the roles of a normalised message.
_ROLES = {"human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant",
          "function": "tool", "ipython": "tool", "developer": "system"}


def normalised(messages: list) -> list[dict]:
    """Messages in one shape whatever the convention: `{"role": system|user|assistant|tool|...,
    "content": text or null}`, with `"tool_calls": [{"name", "arguments"}]` when the message
    calls tools and `"tool_call_id"` when it carries a tool's result."""
    found = []
    for message in messages:
        shaped = _normalised(message)
        if shaped is not None:
            found.append(shaped)
    return found


def event_messages(input_data: Any, output_data: Any) -> list[dict] | None:
    """The normalised conversation of one event: what it was sent, then what it replied; None
    when its content holds no messages."""
    said, replied = messages_of(input_data), messages_of(output_data)
    if said is None and replied is None:
        return None
    return normalised(said or []) + normalised(replied or [])


def _normalised(message: Any) -> dict | None:
    if isinstance(message, str):
        return {"role": "user", "content": message}
    if not isinstance(message, dict):
        return None
    if isinstance(message.get("data"), dict) and message.get("type") in _LANGCHAIN_ROLES:
        return _normalised({**message["data"], "role": _LANGCHAIN_ROLES[message["type"]]})
    role = str(message.get("role") or message.get("type") or "message")
    role = _ROLES.get(role, role)
    texts: list[str] = []
    calls: list[dict] = []
    call_id = message.get("tool_call_id")
    for key in ("content", "contents", "parts"):
        content = message.get(key)
        for part in [content] if isinstance(content, dict) else content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                if isinstance(part, str):
                    texts.append(part)
                continue
            kind = part.get("type")
            if kind in _CALL_TYPES or (kind is None and "function" in part):
                calls.append(_call(part))
            elif kind in _RESULT_TYPES:
                role = "tool"
                call_id = call_id or part.get("id") or part.get("tool_use_id") or part.get("toolCallId")
                texts.append(_part_text(part)[2:])
            else:
                text = _part_text(part)
                if text:
                    texts.append(text)
        if isinstance(content, str):
            texts.append(content)
    calls += [_call(call) for call in message.get("tool_calls") or () if isinstance(call, dict)]
    if isinstance(message.get("function_call"), dict):
        calls.append(_call(message["function_call"]))
    shaped: dict[str, Any] = {"role": role, "content": "\n".join(t for t in texts if t) or None}
    if calls:
        shaped["tool_calls"] = list({dumps(c): c for c in calls}.values())  # a call given twice is one
    if call_id is not None:
        shaped["tool_call_id"] = str(call_id)
    return shaped


def _call(call: dict) -> dict:
    """{"name", "arguments"} of a tool call in any of the shapes above (arguments parsed when
    they are JSON text)."""
    import orjson

    name, arguments = _name_and_arguments(call)
    if isinstance(arguments, str):
        with contextlib.suppress(orjson.JSONDecodeError):
            arguments = orjson.loads(arguments)
    return {"name": name, "arguments": arguments}
