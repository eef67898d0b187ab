"""Capture scenario for LangChain 1.x / LangGraph 1.x with OpenInference instrumentation (../README.md).

One LangGraph agent (`langchain.agents.create_agent`, named "weather_agent") over ChatOpenAI, with an
in-memory checkpointer; every run uses the same LangGraph thread id, which OpenInference reads as the
session id. Three runs:
1. get_weather succeeds, lookup_order raises a ToolException that the tool hands back to the model
   (handle_tool_error=True), then the model answers.
2. the model answers HTTP 500: the run fails.
3. explode raises a plain exception, which LangGraph does not catch: the run fails inside the tool.
Run by run.sh inside a throwaway venv, against the capture kit's fake OpenAI Chat Completions API.
"""

from langchain.agents import create_agent
from langchain_core.tools import ToolException, tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from openai import InternalServerError
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

SESSION = "capture-langchain-thread-1"
PROMPT_OK = ('Weather in Paris and order A-1, please. [[call get_weather {"city": "Paris"}]] '
             '[[call lookup_order {"order_id": "A-1"}]] '
             '[[answer Paris is sunny, 21 C; order A-1 could not be looked up.]]')
PROMPT_FAIL = "And tomorrow? [[fail]]"
PROMPT_CRASH = "Now break something. [[call explode {\"reason\": \"test\"}]]"


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 21 C"


@tool
def lookup_order(order_id: str) -> str:
    """Status of an order."""
    raise ToolException(f"order service unavailable for {order_id}")


lookup_order.handle_tool_error = True  # the ToolException's message goes back to the model


@tool
def explode(reason: str) -> str:
    """A tool that fails outright."""
    raise ValueError(f"exploded: {reason}")


def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "capture-langchain"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_ENDPOINT
    LangChainInstrumentor().instrument(tracer_provider=provider)

    model = ChatOpenAI(model="gpt-4o-mini", max_retries=0)  # OPENAI_BASE_URL: the capture server
    agent = create_agent(model, tools=[get_weather, lookup_order, explode], name="weather_agent",
                         system_prompt="Answer with the tools.", checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": SESSION}}
    result = agent.invoke({"messages": [{"role": "user", "content": PROMPT_OK}]}, config)
    print("run 1:", result["messages"][-1].content)
    try:
        agent.invoke({"messages": [{"role": "user", "content": PROMPT_FAIL}]}, config)
    except InternalServerError as error:
        print("run 2 failed as planned:", error.status_code)
    try:
        agent.invoke({"messages": [{"role": "user", "content": PROMPT_CRASH}]}, config)
    except ValueError as error:
        print("run 3 failed as planned:", error)
    provider.shutdown()  # flushes the batch


if __name__ == "__main__":
    main()
