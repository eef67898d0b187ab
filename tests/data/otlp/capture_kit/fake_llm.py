"""A deterministic fake of the OpenAI and Anthropic HTTP APIs, driven by directives in the user prompt.

Stdlib only: the capture kit runs inside throwaway virtual environments with whatever the framework
under test installs. See README.md beside this file for the directive language and the fixed usage
numbers; `Fake.handle` is the single entry point the server calls.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
import time
from dataclasses import dataclass, field

DIRECTIVE = re.compile(r"\[\[(\w+)(?:\s+(.*?))?\]\]", re.DOTALL)

# Requested model -> the dated model the provider reports back, as the real services do.
RESPONSE_MODELS = {
    "gpt-4o-mini": "gpt-4o-mini-2024-07-18",
    "gpt-4o": "gpt-4o-2024-08-06",
    "gpt-4.1-mini": "gpt-4.1-mini-2025-04-14",
    "text-embedding-3-small": "text-embedding-3-small",
    "claude-3-5-sonnet-latest": "claude-3-5-sonnet-20241022",
    "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5": "claude-haiku-4-5-20251001",
}

# Usage reported for a call, by its turn (0 = the first model call after the user prompt).
FIRST_TURN = {"input": 100, "output": 20, "cached": 0, "reasoning": 0}
LATER_TURN = {"input": 150, "output": 30, "cached": 64, "reasoning": 8}
ANTHROPIC_CACHE_TOKENS = 1000
EMBEDDING_TOKENS_PER_INPUT = 5
EMBEDDING_DIMENSIONS = 8

OPENAI_ERROR = {"error": {"message": "The server had an error while processing your request. Sorry about that!",
                          "type": "server_error", "param": None, "code": None}}
ANTHROPIC_ERROR = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}


@dataclass
class Conversation:
    """What the fake needs from a request: the prompt that drives it and what happened since."""

    prompt: str
    calls_made: int
    cache_control: bool = False
    steps: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self):
        self.steps = [(m.group(1), (m.group(2) or "").strip()) for m in DIRECTIVE.finditer(self.prompt)]

    def next_step(self) -> tuple[str, object]:
        """("call", (name, arguments json)), ("fail", "") or ("answer", text) for this turn."""
        actions = [s for s in self.steps if s[0] in ("call", "fail")]
        if self.calls_made < len(actions):
            kind, arg = actions[self.calls_made]
            if kind == "fail":
                return "fail", ""
            name, _, arguments = arg.partition(" ")
            return "call", (name, json.dumps(json.loads(arguments or "{}"), separators=(",", ":")))
        answers = [arg for kind, arg in self.steps if kind == "answer"]
        if answers:
            return "answer", answers[-1]
        return "answer", f"Final answer after {self.calls_made} tool call(s)."

    def call_id(self, prefix: str) -> str:
        digest = hashlib.sha1(self.prompt.encode()).hexdigest()[:12]
        return f"{prefix}{digest}{self.calls_made:02d}"


def _text(content) -> str:
    """The text of a message content: a string, or a list of text-bearing parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and p.get("type") in ("text", "input_text"))
    return ""


def _has_cache_control(value) -> bool:
    if isinstance(value, dict):
        return "cache_control" in value or any(_has_cache_control(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_cache_control(v) for v in value)
    return False


def chat_conversation(body: dict) -> Conversation:
    messages = body.get("messages") or []
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user" and _text(m.get("content"))),
                default=-1)
    prompt = _text(messages[start].get("content")) if start >= 0 else ""
    calls = sum(len(m.get("tool_calls") or []) for m in messages[start + 1:] if m.get("role") == "assistant")
    return Conversation(prompt, calls)


def responses_conversation(body: dict) -> Conversation:
    items = body.get("input")
    if isinstance(items, str):
        return Conversation(items, 0)
    items = items or []
    start = max((i for i, m in enumerate(items)
                 if m.get("role") == "user" and m.get("type", "message") == "message" and _text(m.get("content"))),
                default=-1)
    prompt = _text(items[start].get("content")) if start >= 0 else ""
    calls = sum(1 for m in items[start + 1:] if m.get("type") == "function_call")
    return Conversation(prompt, calls)


def anthropic_conversation(body: dict) -> Conversation:
    messages = body.get("messages") or []
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user" and _text(m.get("content"))),
                default=-1)
    prompt = _text(messages[start].get("content")) if start >= 0 else ""
    calls = sum(1 for m in messages[start + 1:] if m.get("role") == "assistant"
                for block in (m.get("content") if isinstance(m.get("content"), list) else [])
                if block.get("type") == "tool_use")
    return Conversation(prompt, calls, cache_control=_has_cache_control(body))


def _usage_numbers(conversation: Conversation) -> dict:
    return FIRST_TURN if conversation.calls_made == 0 else LATER_TURN


def _chunks(text: str, size: int = 12) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class Fake:
    """The provider side of the capture server. Thread-safe; ids count up per server run."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counter = 0
        self._anthropic_cache_written = False

    def _next_id(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def handles(self, path: str) -> bool:
        return path.rstrip("/").endswith(("/chat/completions", "/responses", "/embeddings", "/messages"))

    def handle(self, path: str, body: dict) -> tuple[int, str, bytes, dict]:
        """(status, content type, response body, summary for llm.jsonl) for one provider request."""
        path = path.rstrip("/")
        if path.endswith("/chat/completions"):
            return self._chat(body)
        if path.endswith("/responses"):
            return self._responses(body)
        if path.endswith("/embeddings"):
            return self._embeddings(body)
        return self._anthropic(body)

    # -- OpenAI Chat Completions -------------------------------------------------------------------

    def _chat(self, body: dict):
        conv = chat_conversation(body)
        kind, arg = conv.next_step()
        stream = bool(body.get("stream"))
        summary = {"api": "chat.completions", "model": body.get("model"), "stream": stream,
                   "turn": conv.calls_made, "action": kind}
        if kind == "fail":
            return 500, "application/json", json.dumps(OPENAI_ERROR).encode(), {**summary, "status": 500}
        n = _usage_numbers(conv)
        usage = {"prompt_tokens": n["input"], "completion_tokens": n["output"],
                 "total_tokens": n["input"] + n["output"],
                 "prompt_tokens_details": {"cached_tokens": n["cached"], "audio_tokens": 0},
                 "completion_tokens_details": {"reasoning_tokens": n["reasoning"], "audio_tokens": 0,
                                               "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
        model = RESPONSE_MODELS.get(body.get("model"), body.get("model"))
        base = {"id": f"chatcmpl-capture{self._next_id():04d}", "created": int(time.time()), "model": model,
                "system_fingerprint": "fp_capture", "service_tier": "default"}
        if kind == "call":
            name, arguments = arg
            call = {"id": conv.call_id("call_"), "type": "function", "function": {"name": name, "arguments": arguments}}
            message = {"role": "assistant", "content": None, "tool_calls": [call], "refusal": None}
            finish = "tool_calls"
            summary.update(tool=name, arguments=arguments, tool_call_id=call["id"])
        else:
            message = {"role": "assistant", "content": arg, "refusal": None}
            finish = "stop"
            summary.update(text=arg)
        summary.update(status=200, usage=usage)
        if not stream:
            payload = {**base, "object": "chat.completion",
                       "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                       "usage": usage}
            return 200, "application/json", json.dumps(payload).encode(), summary
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        extra = {"usage": None} if include_usage else {}

        def chunk(delta, finish_reason=None):
            return {**base, "object": "chat.completion.chunk", **extra,
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}

        events = []
        if kind == "call":
            call = message["tool_calls"][0]
            events.append(chunk({"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": call["id"], "type": "function",
                 "function": {"name": call["function"]["name"], "arguments": ""}}]}))
            events += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
                       for piece in _chunks(call["function"]["arguments"])]
        else:
            events.append(chunk({"role": "assistant", "content": "", "refusal": None}))
            events += [chunk({"content": piece}) for piece in _chunks(message["content"])]
        events.append(chunk({}, finish))
        if include_usage:
            events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        return 200, "text/event-stream", data.encode(), summary

    # -- OpenAI Responses --------------------------------------------------------------------------

    def _responses(self, body: dict):
        conv = responses_conversation(body)
        kind, arg = conv.next_step()
        stream = bool(body.get("stream"))
        summary = {"api": "responses", "model": body.get("model"), "stream": stream,
                   "turn": conv.calls_made, "action": kind}
        if kind == "fail":
            return 500, "application/json", json.dumps(OPENAI_ERROR).encode(), {**summary, "status": 500}
        n = _usage_numbers(conv)
        usage = {"input_tokens": n["input"], "input_tokens_details": {"cached_tokens": n["cached"]},
                 "output_tokens": n["output"], "output_tokens_details": {"reasoning_tokens": n["reasoning"]},
                 "total_tokens": n["input"] + n["output"]}
        number = self._next_id()
        if kind == "call":
            name, arguments = arg
            item = {"type": "function_call", "id": f"fc_capture{number:04d}", "call_id": conv.call_id("call_"),
                    "name": name, "arguments": arguments, "status": "completed"}
            summary.update(tool=name, arguments=arguments, tool_call_id=item["call_id"])
        else:
            item = {"type": "message", "id": f"msg_capture{number:04d}", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": arg, "annotations": [], "logprobs": []}]}
            summary.update(text=arg)
        summary.update(status=200, usage=usage)
        response = {"id": f"resp_capture{number:04d}", "object": "response", "created_at": int(time.time()),
                    "status": "completed", "error": None, "incomplete_details": None,
                    "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
                    "model": RESPONSE_MODELS.get(body.get("model"), body.get("model")), "output": [item],
                    "parallel_tool_calls": body.get("parallel_tool_calls", True), "previous_response_id": None,
                    "reasoning": {"effort": None, "summary": None}, "service_tier": "default", "store": True,
                    "temperature": body.get("temperature", 1.0), "text": {"format": {"type": "text"}},
                    "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
                    "top_p": body.get("top_p", 1.0), "truncation": "disabled", "usage": usage,
                    "user": None, "metadata": {}}
        if not stream:
            return 200, "application/json", json.dumps(response).encode(), summary
        return 200, "text/event-stream", _responses_stream(response, item), summary

    # -- OpenAI embeddings -------------------------------------------------------------------------

    def _embeddings(self, body: dict):
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
        dimensions = int(body.get("dimensions") or EMBEDDING_DIMENSIONS)
        data = []
        for index, text in enumerate(inputs):
            seed = hashlib.sha256(json.dumps(text).encode()).digest()
            vector = [((seed[i % len(seed)] / 255.0) * 2 - 1) for i in range(dimensions)]
            if body.get("encoding_format") == "base64":
                embedding = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode()
            else:
                embedding = vector
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = EMBEDDING_TOKENS_PER_INPUT * len(inputs)
        payload = {"object": "list", "data": data, "model": RESPONSE_MODELS.get(body.get("model"), body.get("model")),
                   "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
        summary = {"api": "embeddings", "model": body.get("model"), "inputs": len(inputs), "status": 200,
                   "usage": payload["usage"]}
        return 200, "application/json", json.dumps(payload).encode(), summary

    # -- Anthropic Messages ------------------------------------------------------------------------

    def _anthropic(self, body: dict):
        conv = anthropic_conversation(body)
        kind, arg = conv.next_step()
        stream = bool(body.get("stream"))
        summary = {"api": "anthropic.messages", "model": body.get("model"), "stream": stream,
                   "turn": conv.calls_made, "action": kind}
        if kind == "fail":
            return 500, "application/json", json.dumps(ANTHROPIC_ERROR).encode(), {**summary, "status": 500}
        n = _usage_numbers(conv)
        created = read = 0
        if conv.cache_control:
            with self._lock:
                if self._anthropic_cache_written:
                    read = ANTHROPIC_CACHE_TOKENS
                else:
                    created, self._anthropic_cache_written = ANTHROPIC_CACHE_TOKENS, True
        usage = {"input_tokens": n["input"], "output_tokens": n["output"],
                 "cache_creation_input_tokens": created, "cache_read_input_tokens": read}
        if kind == "call":
            name, arguments = arg
            block = {"type": "tool_use", "id": conv.call_id("toolu_"), "name": name, "input": json.loads(arguments)}
            stop = "tool_use"
            summary.update(tool=name, arguments=arguments, tool_call_id=block["id"])
        else:
            block = {"type": "text", "text": arg}
            stop = "end_turn"
            summary.update(text=arg)
        summary.update(status=200, usage=usage)
        message = {"id": f"msg_capture{self._next_id():04d}", "type": "message", "role": "assistant",
                   "model": RESPONSE_MODELS.get(body.get("model"), body.get("model")), "content": [block],
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not stream:
            return 200, "application/json", json.dumps(message).encode(), summary
        return 200, "text/event-stream", _anthropic_stream(message, block), summary


def _sse(events: list[tuple[str, dict]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def _responses_stream(response: dict, item: dict) -> bytes:
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    events = [("response.created", {"response": started}), ("response.in_progress", {"response": started})]
    if item["type"] == "function_call":
        events.append(("response.output_item.added", {"output_index": 0, "item": {**item, "arguments": "",
                                                                                   "status": "in_progress"}}))
        events += [("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": 0,
                                                                "delta": piece})
                   for piece in _chunks(item["arguments"])]
        events.append(("response.function_call_arguments.done", {"item_id": item["id"], "output_index": 0,
                                                                  "arguments": item["arguments"]}))
    else:
        text = item["content"][0]["text"]
        events.append(("response.output_item.added", {"output_index": 0, "item": {**item, "content": [],
                                                                                   "status": "in_progress"}}))
        part = {"type": "output_text", "text": "", "annotations": []}
        events.append(("response.content_part.added", {"item_id": item["id"], "output_index": 0,
                                                       "content_index": 0, "part": part}))
        events += [("response.output_text.delta", {"item_id": item["id"], "output_index": 0, "content_index": 0,
                                                   "delta": piece, "logprobs": []}) for piece in _chunks(text)]
        events.append(("response.output_text.done", {"item_id": item["id"], "output_index": 0, "content_index": 0,
                                                     "text": text, "logprobs": []}))
        events.append(("response.content_part.done", {"item_id": item["id"], "output_index": 0,
                                                      "content_index": 0, "part": {**part, "text": text}}))
    events.append(("response.output_item.done", {"output_index": 0, "item": item}))
    events.append(("response.completed", {"response": response}))
    numbered = [(name, {"type": name, "sequence_number": i, **data}) for i, (name, data) in enumerate(events)]
    return _sse(numbered)


def _anthropic_stream(message: dict, block: dict) -> bytes:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events = [("message_start", {"type": "message_start", "message": start})]
    if block["type"] == "tool_use":
        events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {**block, "input": {}}}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "input_json_delta", "partial_json": piece}})
                   for piece in _chunks(json.dumps(block["input"], separators=(",", ":")))]
    else:
        events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {"type": "text", "text": ""}}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": piece}})
                   for piece in _chunks(block["text"])]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": usage["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)
