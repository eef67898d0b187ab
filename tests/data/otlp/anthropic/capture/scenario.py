"""Capture scenario for the Anthropic Python SDK with prompt caching (see ../README.md).

One script for two instrumentations, chosen by the first argument:
- `openinference`: openinference-instrumentation-anthropic, the session and user set with
  OpenInference's `using_session` / `using_user` (recorded in tests/data/otlp/anthropic/);
- `openllmetry`: opentelemetry-instrumentation-anthropic (OpenLLMetry) on its own, which has no session
  API (recorded in tests/data/otlp/anthropic-openllmetry/).
The Anthropic SDK itself (2.x) also makes a span of its own for every API call once a global tracer
provider is set; the client is given the session as its `open_telemetry` conversation_id, which that
span carries as `gen_ai.conversation.id`. Each run is wrapped in the application's own span
`support_run` (plain OpenTelemetry API, no attributes) so that a run's model calls share one trace.
Two runs:
1. a tool loop: the system prompt is a text block with `cache_control: ephemeral`; the model asks for
   get_weather (succeeds), then lookup_order (fails: the tool_result goes back with `is_error: true`),
   then answers. The fake provider reports a cache write (1000 tokens) on the first call and cache reads
   on the later ones.
2. the model answers HTTP 500: `anthropic.InternalServerError` ends the run (the run span records it).
Run by run.sh inside a throwaway venv, against the capture kit's fake Anthropic Messages API.
"""

import json
import sys
from contextlib import ExitStack

import anthropic
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

SESSION = "capture-anthropic-session-1"
USER = "user-42"
MODEL = "claude-sonnet-4-5"
PROMPT_OK = ('Weather in Paris and order A-1, please. [[call get_weather {"city": "Paris"}]] '
             '[[call lookup_order {"order_id": "A-1"}]] '
             '[[answer Paris is sunny, 21 C; order A-1 could not be looked up.]]')
PROMPT_FAIL = "And tomorrow? [[fail]]"
# A long, stable system prompt is what prompt caching is for; the fake only looks for cache_control.
SYSTEM = [{"type": "text", "cache_control": {"type": "ephemeral"},
           "text": "You are the support agent of a small shop. Answer with the tools. " * 4}]
TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city.",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "lookup_order", "description": "Status of an order.",
     "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                      "required": ["order_id"]}},
]


def get_weather(city: str) -> str:
    return json.dumps({"city": city, "forecast": "sunny", "celsius": 21})


def lookup_order(order_id: str) -> str:
    raise RuntimeError(f"order service unavailable for {order_id}")


FUNCTIONS = {"get_weather": get_weather, "lookup_order": lookup_order}


def run(client: anthropic.Anthropic, tracer, prompt: str) -> str:
    with tracer.start_as_current_span("support_run"):
        messages = [{"role": "user", "content": prompt}]
        while True:
            response = client.messages.create(model=MODEL, max_tokens=512, system=SYSTEM, tools=TOOLS,
                                              messages=messages)
            if response.stop_reason != "tool_use":
                return "".join(block.text for block in response.content if block.type == "text")
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                              for b in response.content]})
            results = []
            for block in response.content:
                if block.type != "tool_use":
                    continue
                try:
                    results.append({"type": "tool_result", "tool_use_id": block.id,
                                    "content": FUNCTIONS[block.name](**block.input)})
                except RuntimeError as error:
                    results.append({"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                                    "content": f"error: {error}"})
            messages.append({"role": "user", "content": results})


def main() -> None:
    flavour = sys.argv[1]
    provider = TracerProvider(resource=Resource.create({"service.name": f"capture-anthropic-{flavour}"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_ENDPOINT
    trace.set_tracer_provider(provider)
    tracer = trace.get_tracer("capture.support")
    if flavour == "openinference":
        from openinference.instrumentation import using_session, using_user
        from openinference.instrumentation.anthropic import AnthropicInstrumentor

        AnthropicInstrumentor().instrument(tracer_provider=provider)
        scope = [using_session(SESSION), using_user(USER)]
    else:
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

        AnthropicInstrumentor().instrument(tracer_provider=provider)
        scope = []
    # ANTHROPIC_BASE_URL: the capture server. Given open_telemetry, the SDK reads no ANTHROPIC_OPEN_TELEMETRY*
    # variable; its spans keep their defaults (on, metadata only).
    client = anthropic.Anthropic(max_retries=0, open_telemetry={"conversation_id": SESSION})
    with ExitStack() as stack:
        for context in scope:
            stack.enter_context(context)
        print("run 1:", run(client, tracer, PROMPT_OK))
        try:
            run(client, tracer, PROMPT_FAIL)
        except anthropic.InternalServerError as error:
            print("run 2 failed as planned:", error.status_code)
    provider.shutdown()  # flushes the batch


if __name__ == "__main__":
    main()
