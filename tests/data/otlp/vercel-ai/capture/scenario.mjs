// Capture scenario for the Vercel AI SDK's telemetry (see ../README.md).
//
// The OpenTelemetry Node SDK exports spans with the OTLP/HTTP protobuf exporter to
// OTEL_EXPORTER_OTLP_ENDPOINT (the capture server); @ai-sdk/openai talks to the capture server's fake
// OpenAI (OPENAI_BASE_URL), through the Responses API that `openai(modelId)` uses by default.
// Every call has experimental_telemetry on, with functionId "support-agent" and the session and user
// in its metadata. Two calls:
// 1. generateText with two tools and stopWhen: stepCountIs(5): get_weather succeeds, lookup_order
//    throws (the SDK hands the error back to the model as a tool-error and goes on), the model answers.
// 2. generateText again; the model answers HTTP 500 and the call throws.
// Run by run.sh (capture_kit/record_node.sh), with maxRetries 0 so that the 500 is one request.
import { createOpenAI } from "@ai-sdk/openai";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";

const SESSION = "capture-vercel-ai-session-1";
const USER = "user-42";
const PROMPT_OK = 'Weather in Paris and order A-1, please. [[call get_weather {"city": "Paris"}]] '
  + '[[call lookup_order {"order_id": "A-1"}]] '
  + "[[answer Paris is sunny, 21 C; order A-1 could not be looked up.]]";
const PROMPT_FAIL = "And tomorrow? [[fail]]";

// The SDK's default resource detectors less `host`, so that the recording does not carry this machine's id.
process.env.OTEL_NODE_RESOURCE_DETECTORS ??= "env,process,os";
const sdk = new NodeSDK({ serviceName: "capture-vercel-ai", traceExporter: new OTLPTraceExporter() });
sdk.start();

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const tools = {
  get_weather: tool({
    description: "Current weather for a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, forecast: "sunny", celsius: 21 }),
  }),
  lookup_order: tool({
    description: "Status of an order.",
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => {
      throw new Error(`order service unavailable for ${order_id}`);
    },
  }),
};
const telemetry = {
  isEnabled: true,
  functionId: "support-agent",
  metadata: { sessionId: SESSION, userId: USER },
};

const common = {
  model: openai("gpt-4o-mini"),
  system: "Answer with the tools.",
  tools,
  stopWhen: stepCountIs(5),
  maxRetries: 0,
  experimental_telemetry: telemetry,
};
const result = await generateText({ ...common, prompt: PROMPT_OK });
console.log("run 1:", result.text, `(${result.steps.length} steps)`);
try {
  await generateText({ ...common, prompt: PROMPT_FAIL });
} catch (error) {
  console.log("run 2 failed as planned:", error.statusCode ?? error.name);
}
await sdk.shutdown(); // flushes the batch
