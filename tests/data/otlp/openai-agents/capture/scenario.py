"""Capture scenario for the OpenAI Agents SDK with OpenInference instrumentation (see ../README.md).

Two runs in one session (OpenInference `using_session`, and the SDK's own `group_id`):
1. "Planner" hands off to "Triage", which calls get_weather (succeeds), then lookup_order (raises),
   then answers.
2. "Planner" again; the model answers HTTP 500 and the run fails.
Run by run.sh inside a throwaway venv, against the capture kit's fake OpenAI Responses API.
"""

import asyncio

from agents import Agent, RunConfig, Runner, function_tool, set_default_openai_client
from openai import AsyncOpenAI, InternalServerError
from openinference.instrumentation import using_session
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

SESSION = "capture-openai-agents-session-1"
PROMPT_OK = ('Weather in Paris and order A-1, please. [[call transfer_to_triage {}]] '
             '[[call get_weather {"city": "Paris"}]] [[call lookup_order {"order_id": "A-1"}]] '
             '[[answer Paris is sunny, 21 C; order A-1 could not be looked up.]]')
PROMPT_FAIL = "And tomorrow? [[fail]]"


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 21 C"


@function_tool
def lookup_order(order_id: str) -> str:
    """Status of an order."""
    raise RuntimeError(f"order service unavailable for {order_id}")


async def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "capture-openai-agents"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_ENDPOINT
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter
    set_default_openai_client(AsyncOpenAI(max_retries=0))  # OPENAI_BASE_URL: the capture server

    triage = Agent(name="Triage", instructions="Answer with the tools.", model="gpt-4o-mini",
                   tools=[get_weather, lookup_order])
    planner = Agent(name="Planner", instructions="Hand the request to Triage.", model="gpt-4o-mini",
                    handoffs=[triage])
    config = RunConfig(workflow_name="capture scenario", group_id=SESSION)
    with using_session(SESSION):
        result = await Runner.run(planner, PROMPT_OK, run_config=config)
        print("run 1:", result.last_agent.name, "->", result.final_output)
        try:
            await Runner.run(planner, PROMPT_FAIL, run_config=config)
        except InternalServerError as error:
            print("run 2 failed as planned:", error.status_code)
    provider.shutdown()  # flushes the batch


if __name__ == "__main__":
    asyncio.run(main())
