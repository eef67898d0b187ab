"""Capture scenario for LlamaIndex 0.14 with OpenInference instrumentation (see ../README.md).

Before any agent run (outside any session): a VectorStoreIndex built from three documents, which
embeds them. Then one FunctionAgent ("weather_agent") with one workflow Context reused across two runs,
both inside OpenInference `using_session`:
1. get_weather succeeds, search_docs retrieves from the index (embeds the query), lookup_order
   raises (FunctionAgent hands the error back to the model), then the model answers.
2. the model answers HTTP 500: the run fails.
Run by run.sh inside a throwaway venv, against the capture kit's fake OpenAI API (streaming Chat
Completions, embeddings).
"""

import asyncio
import os

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context
from llama_index.embeddings.openai import OpenAIEmbedding
from llama_index.llms.openai import OpenAI
from openinference.instrumentation import using_session
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

SESSION = "capture-llama-index-session-1"
PROMPT_OK = ('Weather in Paris, the refund policy and order A-1, please. [[call get_weather {"city": "Paris"}]] '
             '[[call search_docs {"query": "refund policy"}]] [[call lookup_order {"order_id": "A-1"}]] '
             '[[answer Paris is sunny, 21 C; refunds within 30 days; order A-1 could not be looked up.]]')
PROMPT_FAIL = "And tomorrow? [[fail]]"
DOCUMENTS = ["Refunds are accepted within 30 days of delivery.",
             "Orders ship within two working days.",
             "Support answers on weekdays from 9 to 17."]


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 21 C"


def lookup_order(order_id: str) -> str:
    """Status of an order."""
    raise RuntimeError(f"order service unavailable for {order_id}")


async def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "capture-llama-index"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_ENDPOINT
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)

    base = os.environ["OPENAI_BASE_URL"]  # the capture server; LlamaIndex reads OPENAI_API_BASE only
    # LlamaIndex streams agent model calls; OpenAI reports usage in a stream only when asked to.
    Settings.llm = OpenAI(model="gpt-4o-mini", api_base=base, max_retries=0,
                          additional_kwargs={"stream_options": {"include_usage": True}})
    Settings.embed_model = OpenAIEmbedding(model="text-embedding-3-small", api_base=base, max_retries=0)

    index = VectorStoreIndex.from_documents([Document(text=t) for t in DOCUMENTS])  # outside any run
    retriever = index.as_retriever(similarity_top_k=1)

    def search_docs(query: str) -> str:
        """Search the support documents."""
        return "\n".join(node.get_content() for node in retriever.retrieve(query))

    agent = FunctionAgent(name="weather_agent", description="Answers with the tools.",
                          system_prompt="Answer with the tools.",
                          tools=[FunctionTool.from_defaults(fn) for fn in (get_weather, search_docs, lookup_order)])
    ctx = Context(agent)  # the conversation, kept across runs
    with using_session(SESSION):
        answer = await agent.run(user_msg=PROMPT_OK, ctx=ctx)
        print("run 1:", answer)
        try:
            await agent.run(user_msg=PROMPT_FAIL, ctx=ctx)
        except Exception as error:  # the workflow re-raises the provider's error
            print("run 2 failed as planned:", type(error).__name__)
    provider.shutdown()  # flushes the batch


if __name__ == "__main__":
    asyncio.run(main())
