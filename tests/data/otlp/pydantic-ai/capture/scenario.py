"""Capture scenario for Pydantic AI with its built-in OpenTelemetry instrumentation (see ../README.md).

No Logfire: `Agent.instrument_all(InstrumentationSettings(tracer_provider=...))` with a plain OTel
SDK exporter. One agent ("weather_agent") over OpenAIChatModel; three runs in one conversation
(`conversation_id`, passed on every run, with the previous runs' messages as history):
1. get_weather succeeds, lookup_order raises ModelRetry (Pydantic AI's way for a tool to report a
   failure to the model), then the model answers.
2. the model answers HTTP 500: the run fails.
3. explode raises a plain exception, which fails the run.
Run by run.sh inside a throwaway venv, against the capture kit's fake OpenAI Chat Completions API.
"""

import asyncio

from openai import AsyncOpenAI
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent, InstrumentationSettings, ModelRetry
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

CONVERSATION = "capture-pydantic-ai-conversation-1"
PROMPT_OK = ('Weather in Paris and order A-1, please. [[call get_weather {"city": "Paris"}]] '
             '[[call lookup_order {"order_id": "A-1"}]] '
             '[[answer Paris is sunny, 21 C; order A-1 could not be looked up.]]')
PROMPT_FAIL = "And tomorrow? [[fail]]"
PROMPT_CRASH = 'Now break something. [[call explode {"reason": "test"}]]'


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 21 C"


def lookup_order(order_id: str) -> str:
    """Status of an order."""
    raise ModelRetry(f"order service unavailable for {order_id}")


def explode(reason: str) -> str:
    """A tool that fails outright."""
    raise ValueError(f"exploded: {reason}")


async def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "capture-pydantic-ai"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_ENDPOINT

    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=AsyncOpenAI(max_retries=0)))
    # This version has no Agent(instrument=...) argument: instrument_all (or the Instrumentation capability).
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    agent = Agent(model, name="weather_agent", instructions="Answer with the tools.",
                  tools=[get_weather, lookup_order, explode])

    result = await agent.run(PROMPT_OK, conversation_id=CONVERSATION)
    print("run 1:", result.output)
    history = result.all_messages()
    try:
        await agent.run(PROMPT_FAIL, message_history=history, conversation_id=CONVERSATION)
    except ModelHTTPError as error:
        print("run 2 failed as planned:", error.status_code)
    try:
        await agent.run(PROMPT_CRASH, message_history=history, conversation_id=CONVERSATION)
    except ValueError as error:
        print("run 3 failed as planned:", error)
    provider.shutdown()  # flushes the batch


if __name__ == "__main__":
    asyncio.run(main())
