"""Capture scenario for the Traceloop SDK (OpenLLMetry) with its OpenAI instrumentation (see ../README.md).

Traceloop.init() points all three of its exporters at the capture server: traces (/v1/traces), metrics
(/v1/metrics, on by default) and logs (/v1/logs, TRACELOOP_LOGGING_ENABLED=true: Python logging at INFO
and above becomes OTLP log records). An API key makes it send `Authorization: Bearer`.
Two workflow runs, each setting the session and user with Traceloop.set_association_properties:
1. "support_conversation" > "support_agent" runs a Chat Completions tool loop: get_weather succeeds,
   lookup_order raises (the agent logs a warning and hands the error text back to the model), the model
   answers; a task then returns a dict (what Traceloop makes of a structured task output).
2. the same workflow; the model answers HTTP 500 and the workflow raises.
Run by run.sh inside a throwaway venv, against the capture kit's fake OpenAI Chat Completions API.
"""

import json
import logging
import os

os.environ.setdefault("TRACELOOP_LOGGING_ENABLED", "true")  # read by Traceloop.init()
os.environ.setdefault("TRACELOOP_TELEMETRY", "false")  # no anonymous usage telemetry

from openai import InternalServerError, OpenAI  # noqa: E402
from opentelemetry import metrics, trace  # noqa: E402
from traceloop.sdk import Traceloop  # noqa: E402
from traceloop.sdk.decorators import agent, task, tool, workflow  # noqa: E402

SESSION = "capture-traceloop-session-1"
USER = "user-42"
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
log = logging.getLogger("capture.support")


@tool(name="get_weather")
def get_weather(city: str) -> str:
    return json.dumps({"city": city, "forecast": "sunny", "celsius": 21})  # a tool's usual JSON string


@tool(name="lookup_order")
def lookup_order(order_id: str) -> str:
    raise RuntimeError(f"order service unavailable for {order_id}")


FUNCTIONS = {"get_weather": get_weather, "lookup_order": lookup_order}


@agent(name="support_agent")
def support_agent(client: OpenAI, prompt: str) -> str:
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
                log.warning("tool %s failed: %s", call.function.name, error)
                result = f"error: {error}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


@task(name="summarize")
def summarize(answer: str) -> dict:
    return {"answer": answer, "tools_called": 2}


@workflow(name="support_conversation")
def support_conversation(client: OpenAI, prompt: str) -> dict:
    Traceloop.set_association_properties({"session_id": SESSION, "user_id": USER})
    answer = support_agent(client, prompt)
    return summarize(answer)


def main() -> None:
    Traceloop.init(app_name="capture-traceloop", api_endpoint=os.environ["CAPTURE_URL"],
                   api_key="tl-capture-not-a-real-key", telemetry_enabled=False)
    client = OpenAI(max_retries=0)  # OPENAI_BASE_URL: the capture server
    print("run 1:", support_conversation(client, PROMPT_OK))
    try:
        support_conversation(client, PROMPT_FAIL)
    except InternalServerError as error:
        print("run 2 failed as planned:", error.status_code)
    # Traceloop sets the global tracer and meter providers (not the logger provider): flush those two
    # now; the providers' own atexit shutdown then sends the logs and the metrics once more.
    trace.get_tracer_provider().force_flush()
    metrics.get_meter_provider().force_flush()


if __name__ == "__main__":
    main()
