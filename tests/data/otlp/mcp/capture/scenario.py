"""Capture scenario for the MCP Python SDK's built-in OpenTelemetry (see ../README.md).

An MCP server (`MCPServer`, in-process) with three tools, and the SDK's `Client` calling them
inside an application span that names the conversation (`session.id`), as an agent that uses MCP
tools would. The SDK traces both sides on its own: a CLIENT span per request sent
(`MCP send tools/call get_weather`) and a SERVER span per request handled (`tools/call
get_weather`, `gen_ai.operation.name=execute_tool`), the server's under the client's (W3C context
in `_meta`). Calls: the tool list, get_weather (succeeds), lookup_order (returns a result marked
isError: a tool failure the model is told about), explode (raises: the SDK answers with an error
result too). No LLM is involved: the capture kit's fake provider is not called.
"""

import asyncio

from mcp import Client
from mcp.server.mcpserver import MCPServer
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

SESSION = "capture-mcp-session-1"

server = MCPServer("weather-tools")


@server.tool()
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 21 C"


@server.tool()
def lookup_order(order_id: str) -> dict:
    """Status of an order."""
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=f"order service unavailable for {order_id}")],
                          is_error=True)


@server.tool()
def explode(reason: str) -> str:
    """A tool that fails outright."""
    raise ValueError(f"exploded: {reason}")


async def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "capture-mcp"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_ENDPOINT
    trace.set_tracer_provider(provider)
    tracer = trace.get_tracer("capture-mcp-app")

    with tracer.start_as_current_span("invoke_agent support_agent", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support_agent",
            "session.id": SESSION}):
        async with Client(server) as client:
            tools = await client.list_tools()
            print("tools:", [t.name for t in tools.tools])
            for name, arguments in (("get_weather", {"city": "Paris"}), ("lookup_order", {"order_id": "A-1"}),
                                    ("explode", {"reason": "test"})):
                result = await client.call_tool(name, arguments)
                print(name, "error" if result.is_error else "ok", [c.text for c in result.content])
    provider.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
