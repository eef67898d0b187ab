"""Capture scenario for the Langfuse Python SDK 3.x (see ../README.md).

The client's host is the capture server, so its span exporter posts OTLP to
`<host>/api/public/otel/v1/traces` with `Authorization: Basic base64(public_key:secret_key)`.
Instrumented with `@observe` and the SDK's OpenAI integration (`from langfuse.openai import openai`).
Two traces, each setting the trace's session, user and tags with `update_current_trace` (the 3.x way):
1. agent "support_agent" runs a Chat Completions tool loop: tool get_weather succeeds, tool
   lookup_order raises (`@observe` marks it level ERROR; the agent hands the error text back to the
   model), the model answers.
2. the same agent; the model answers HTTP 500: the generation and the agent fail.
Run by run.sh inside a throwaway venv, against the capture kit's fake OpenAI Chat Completions API.
"""

import json
import os

from langfuse import Langfuse, observe
from langfuse.openai import openai

SESSION = "capture-langfuse-v3-session-1"
USER = "user-42"
TAGS = ["capture", "support"]
PROMPT_OK = ('Weather in Paris and order A-1, please. [[call get_weather {"city": "Paris"}]] '
             '[[call lookup_order {"order_id": "A-1"}]] '
             '[[answer Paris is sunny, 21 C; order A-1 could not be looked up.]]')
PROMPT_FAIL = "And tomorrow? [[fail]]"
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "lookup_order", "description": "Status of an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]}}},
]

langfuse = Langfuse(public_key="pk-lf-test", secret_key="sk-lf-test", host=os.environ["CAPTURE_URL"])
client = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL: the capture server


@observe(name="get_weather", as_type="tool")
def get_weather(city: str) -> str:
    return json.dumps({"city": city, "forecast": "sunny", "celsius": 21})


@observe(name="lookup_order", as_type="tool")
def lookup_order(order_id: str) -> str:
    raise RuntimeError(f"order service unavailable for {order_id}")


FUNCTIONS = {"get_weather": get_weather, "lookup_order": lookup_order}


@observe(name="support_agent", as_type="agent")
def support_agent(prompt: str) -> str:
    langfuse.update_current_trace(session_id=SESSION, user_id=USER, tags=TAGS)
    messages = [{"role": "system", "content": "Answer with the tools."}, {"role": "user", "content": prompt}]
    while True:
        response = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            try:
                result = FUNCTIONS[call.function.name](**json.loads(call.function.arguments))
            except RuntimeError as error:
                result = f"error: {error}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def main() -> None:
    print("run 1:", support_agent(PROMPT_OK))
    try:
        support_agent(PROMPT_FAIL)
    except openai.InternalServerError as error:
        print("run 2 failed as planned:", error.status_code)
    langfuse.shutdown()  # flushes the batch


if __name__ == "__main__":
    main()
