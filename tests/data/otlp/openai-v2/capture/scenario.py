"""Capture scenario for the OpenAI SDK with opentelemetry-instrumentation-openai-v2 (see ../README.md).

Usage: scenario.py default|span_and_event. `default` sets no GenAI variable (no message content);
`span_and_event` sets OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_and_event. Spans and log records are both
exported over OTLP/HTTP.

openai-v2 instruments only the SDK's chat and embeddings calls, so the agent is a hand-written tool
loop ("weather_agent") whose agent and tool spans come from opentelemetry-util-genai's
TelemetryHandler (what the instrumentation itself uses; 1.1b0, the last release openai-v2 2.4b0 can
import), with a conversation id on the agent invocation:
0. one embeddings call before any agent run (no agent span, no conversation);
1. run 1: get_weather succeeds, lookup_order raises (the loop reports the error to the model), then
   the model answers;
2. run 2: the model answers HTTP 500 and the run fails.
Run by run.sh inside a throwaway venv, against the capture kit's fake OpenAI API.
"""

import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "default"
if MODE == "span_and_event":
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_and_event"
elif MODE != "default":
    raise SystemExit(f"unknown mode {MODE!r}: default or span_and_event")

from openai import InternalServerError, OpenAI  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from opentelemetry.util.genai.handler import TelemetryHandler  # noqa: E402

CONVERSATION = f"capture-openai-v2-conversation-{MODE}"
PROMPT_OK = ('Weather in Paris and order A-1, please. [[call get_weather {"city": "Paris"}]] '
             '[[call lookup_order {"order_id": "A-1"}]] '
             '[[answer Paris is sunny, 21 C; order A-1 could not be looked up.]]')
PROMPT_FAIL = "And tomorrow? [[fail]]"


def get_weather(city: str) -> str:
    return f"{city}: sunny, 21 C"


def lookup_order(order_id: str) -> str:
    raise RuntimeError(f"order service unavailable for {order_id}")


TOOLS = {"get_weather": (get_weather, "Current weather for a city.", "city"),
         "lookup_order": (lookup_order, "Status of an order.", "order_id")}
SCHEMAS = [{"type": "function", "function": {
    "name": name, "description": description,
    "parameters": {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}}}
    for name, (_, description, field) in TOOLS.items()]


def run_agent(client: OpenAI, handler: TelemetryHandler, prompt: str) -> str:
    """One agent run: call the model, run the tools it asks for, until it answers."""
    messages = [{"role": "system", "content": "Answer with the tools."}, {"role": "user", "content": prompt}]
    with handler.invoke_local_agent(agent_name="weather_agent", request_model="gpt-4o-mini") as agent:
        agent.conversation_id = CONVERSATION  # util-genai 1.1b0: written on the agent span only
        while True:
            response = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SCHEMAS)
            message = response.choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                function, description, _ = TOOLS[call.function.name]
                arguments = json.loads(call.function.arguments)
                try:
                    with handler.tool(call.function.name, tool_call_id=call.id, tool_type="function",
                                      tool_description=description) as tool:
                        if tool.should_capture_content_on_span:  # as the handler's documentation asks
                            tool.arguments = arguments
                        result = function(**arguments)
                        if tool.should_capture_content_on_span:
                            tool.tool_result = result
                except RuntimeError as error:
                    result = f"error: {error}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def main() -> None:
    resource = Resource.create({"service.name": f"capture-openai-v2-{MODE}"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_ENDPOINT
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    handler = TelemetryHandler(tracer_provider=tracer_provider, logger_provider=logger_provider)

    client = OpenAI(max_retries=0)  # OPENAI_BASE_URL: the capture server
    client.embeddings.create(model="text-embedding-3-small", input=["Refunds are accepted within 30 days."])
    print("run 1:", run_agent(client, handler, PROMPT_OK))
    try:
        run_agent(client, handler, PROMPT_FAIL)
    except InternalServerError as error:
        print("run 2 failed as planned:", error.status_code)
    tracer_provider.shutdown()  # flushes the batches
    logger_provider.shutdown()


if __name__ == "__main__":
    main()
