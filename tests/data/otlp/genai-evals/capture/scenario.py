"""Capture scenario for GenAI evaluation results (`gen_ai.evaluation.result`, see ../README.md).

Splunk's OpenTelemetry GenAI utilities (`splunk-otel-util-genai`, with its evaluation manager
`splunk-otel-util-genai-evals`) record model calls as GenAI spans and, once a call ends, run the
configured evaluators on it in the background and emit each result as a `gen_ai.evaluation.result`
event (an OTLP log record in the call's trace and span). The builtin `length` evaluator needs no
LLM (a score from the answer's length, with a label short / medium / long), so no provider is
called: the application records two chat calls of its own (a short answer and a long one) inside
an agent span that names the conversation (`session.id`).
"""

import os

# The builtin `length` evaluator, reporting under the name `relevance`: the event emitter passes on
# only the metric names it knows (bias, toxicity, sentiment, hallucination, relevance).
os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_EVALS_EVALUATORS", "length(LLMInvocation(relevance))")
os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_EMITTERS", "span_metric_event")

from opentelemetry import _logs, trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

SESSION = "capture-genai-evals-session-1"
ANSWERS = ("Paris: sunny, 21 C.",
           "Paris is sunny today at 21 C with a light westerly breeze; tomorrow brings clouds in the "
           "morning, rain in the afternoon and a high of 17 C, so take an umbrella if you go out late.")


def main() -> None:
    resource = Resource.create({"service.name": "capture-genai-evals"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(tracer_provider)
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    _logs.set_logger_provider(logger_provider)

    from opentelemetry.util.genai.handler import get_telemetry_handler
    from opentelemetry.util.genai.types import InputMessage, LLMInvocation, OutputMessage, Text

    handler = get_telemetry_handler(tracer_provider=tracer_provider, logger_provider=logger_provider)
    tracer = trace.get_tracer("capture-genai-evals-app")
    with tracer.start_as_current_span("invoke_agent support_agent", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support_agent", "session.id": SESSION}):
        for question, answer in zip(("Weather in Paris?", "And the next days?"), ANSWERS):
            call = LLMInvocation(request_model="gpt-4o-mini", provider="openai",
                                 input_messages=[InputMessage(role="user", parts=[Text(content=question)])])
            handler.start_llm(call)
            call.output_messages = [OutputMessage(role="assistant", parts=[Text(content=answer)],
                                                  finish_reason="stop")]
            call.input_tokens, call.output_tokens = 20, len(answer) // 4
            handler.stop_llm(call)
    handler.wait_for_evaluations(30)
    tracer_provider.shutdown()
    logger_provider.shutdown()


if __name__ == "__main__":
    main()
