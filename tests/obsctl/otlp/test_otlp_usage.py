"""Token usage counted once (obsctl/services/otlp/usage.py): span trees made by the real
OpenTelemetry SDK in the shapes of OpenInference, OpenLLMetry and the GenAI semantic
conventions, encoded by the SDK's own OTLP encoder and ingested in every arrival order."""

import itertools

import orjson
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from obsctl.services.analytics import get_analytics
from obsctl.services.otlp import ingest_otlp
from obsctl.services.sessions import get_session
from obsctl.store.postgres import event_stats as pg_event_stats
from obsctl.store.sqlite import event_stats
from tests.otlp_support import request as otlp_request
from tests.otlp_support import span as otlp_span
from tests.store_support import rollup_rows


def record(build) -> list:
    """The finished spans (in the order they ended) of `build(tracer)`."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "usage-tests"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    build(provider.get_tracer("tests.usage"))
    provider.shutdown()
    return list(memory.get_finished_spans())


def send(store, spans) -> None:
    """One OTLP/HTTP protobuf export request of `spans`."""
    result = ingest_otlp(store, encode_spans(spans).SerializeToString(), "protobuf")
    assert result.rejected_spans == 0


def openinference(tracer):
    """OpenInference: an AGENT span with the run's total, a CHAIN, two LLM spans and a TOOL."""
    with tracer.start_as_current_span("Agent run") as agent:
        agent.set_attribute("openinference.span.kind", "AGENT")
        agent.set_attribute("session.id", "oi-session")
        agent.set_attribute("llm.token_count.prompt", 300)
        agent.set_attribute("llm.token_count.completion", 70)
        with tracer.start_as_current_span("plan") as chain:
            chain.set_attribute("openinference.span.kind", "CHAIN")
            chain.set_attribute("llm.token_count.prompt", 100)
            chain.set_attribute("llm.token_count.completion", 20)
            with tracer.start_as_current_span("ChatCompletion") as call:
                call.set_attribute("openinference.span.kind", "LLM")
                call.set_attribute("llm.model_name", "gpt-4o-mini")
                call.set_attribute("llm.token_count.prompt", 100)
                call.set_attribute("llm.token_count.completion", 20)
        with tracer.start_as_current_span("lookup") as tool:
            tool.set_attribute("openinference.span.kind", "TOOL")
            tool.set_attribute("tool.name", "lookup")
        with tracer.start_as_current_span("ChatCompletion") as call:
            call.set_attribute("openinference.span.kind", "LLM")
            call.set_attribute("llm.model_name", "gpt-4o-mini")
            call.set_attribute("llm.token_count.prompt", 200)
            call.set_attribute("llm.token_count.completion", 50)


def openllmetry(tracer):
    """OpenLLMetry: workflow -> task -> openai.chat; the task reports its call's usage too."""
    with tracer.start_as_current_span("support.workflow") as workflow:
        workflow.set_attribute("traceloop.span.kind", "workflow")
        workflow.set_attribute("traceloop.entity.name", "support")
        workflow.set_attribute("traceloop.association.properties.session_id", "tl-session")
        workflow.set_attribute("gen_ai.usage.prompt_tokens", 80)
        workflow.set_attribute("gen_ai.usage.completion_tokens", 12)
        with tracer.start_as_current_span("answer.task") as task:
            task.set_attribute("traceloop.span.kind", "task")
            task.set_attribute("gen_ai.usage.prompt_tokens", 80)
            task.set_attribute("gen_ai.usage.completion_tokens", 12)
            with tracer.start_as_current_span("openai.chat") as call:
                call.set_attribute("llm.request.type", "chat")
                call.set_attribute("gen_ai.system", "openai")
                call.set_attribute("gen_ai.request.model", "gpt-4o")
                call.set_attribute("gen_ai.usage.prompt_tokens", 80)
                call.set_attribute("gen_ai.usage.completion_tokens", 12)


def genai(tracer):
    """GenAI semantic conventions: invoke_agent (with the total) -> chat, execute_tool, chat."""
    with tracer.start_as_current_span("invoke_agent planner") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.agent.name", "planner")
        agent.set_attribute("gen_ai.conversation.id", "genai-session")
        agent.set_attribute("gen_ai.usage.input_tokens", 450)
        agent.set_attribute("gen_ai.usage.output_tokens", 90)
        for tokens_in, tokens_out in ((150, 40), (300, 50)):
            with tracer.start_as_current_span("chat gpt-4o") as call:
                call.set_attribute("gen_ai.operation.name", "chat")
                call.set_attribute("gen_ai.request.model", "gpt-4o")
                call.set_attribute("gen_ai.usage.input_tokens", tokens_in)
                call.set_attribute("gen_ai.usage.output_tokens", tokens_out)
            if tokens_in == 150:
                with tracer.start_as_current_span("execute_tool search") as tool:
                    tool.set_attribute("gen_ai.operation.name", "execute_tool")
                    tool.set_attribute("gen_ai.tool.name", "search")


SHAPES = {
    "openinference": (openinference, "oi-session", (300, 70)),
    "openllmetry": (openllmetry, "tl-session", (80, 12)),
    "genai": (genai, "genai-session", (450, 90)),
}


def totals(store, session_id):
    session = get_session(store, session_id)
    return (session["total_tokens_in"], session["total_tokens_out"]), session["events"]


def test_export_order_counts_each_model_call_once(store, shape):
    build, session_id, expected = SHAPES[shape]
    send(store, record(build))  # children end (and are listed) before their parents
    (tokens, events) = totals(store, session_id)
    assert tokens == expected
    assert sum(e["tokens_in"] or 0 for e in events) == expected[0]
    assert sum(e["tokens_out"] or 0 for e in events) == expected[1]


@pytest.fixture(params=sorted(SHAPES))
def shape(request):
    return request.param


def test_parent_sent_before_its_children_in_another_request(store, shape):
    build, session_id, expected = SHAPES[shape]
    spans = record(build)
    for span in reversed(spans):  # every span in its own request, parents first
        send(store, [span])
    assert totals(store, session_id)[0] == expected


def test_every_arrival_order_of_the_openllmetry_tree(store):
    spans = record(openllmetry)
    for order in itertools.permutations(range(len(spans))):
        for span in (spans[i] for i in order):
            send(store, [span])
        assert totals(store, "tl-session")[0] == (80, 12), order
    # Sent again, in every order, nothing moves: each request was a duplicate.
    overview = get_analytics(store)["overview"]
    assert (overview["total_tokens_in"], overview["total_tokens_out"]) == (80, 12)


def test_resent_spans_do_not_count_twice(store, shape):
    build, session_id, expected = SHAPES[shape]
    spans = record(build)
    send(store, spans[::2])
    send(store, spans)
    send(store, list(reversed(spans)))
    assert totals(store, session_id)[0] == expected


def test_uncounted_usage_is_kept_with_the_span(store):
    send(store, list(reversed(record(openllmetry))))
    events = {e["metadata"]["span_name"]: e for e in totals(store, "tl-session")[1]}
    assert events["openai.chat"]["tokens_in"] == 80
    for name in ("support.workflow", "answer.task"):
        assert events[name]["tokens_in"] is None and events[name]["tokens_out"] is None
        assert events[name]["metadata"]["uncounted_usage"] == {"tokens_in": 80, "tokens_out": 12}


def test_analytics_model_usage_and_totals_agree_after_a_retraction(store):
    chat, task, workflow = record(openllmetry)
    send(store, [workflow, task])  # the task is counted until its model call arrives
    assert totals(store, "tl-session")[0] == (80, 12)
    send(store, [chat])
    analytics = get_analytics(store)
    overview = analytics["overview"]
    assert (overview["total_tokens_in"], overview["total_tokens_out"]) == (80, 12)
    by_model = {m["model"]: m for m in analytics["model_usage"]}
    assert by_model["gpt-4o"]["total_tokens"] == 92
    assert sum(m["total_tokens"] for m in analytics["model_usage"]) == 92
    # The cost per model is the rollup's: only the model call used tokens once retracted.
    assert {m["model"]: m["call_count"] for m in analytics["costs"]["by_model"]} == {"gpt-4o": 1}
    kept = rollup_rows(store.conn)
    (pg_event_stats if store.backend == "postgresql" else event_stats).rebuild(store.conn)
    assert rollup_rows(store.conn) == kept


def test_a_span_without_kind_counts_when_no_model_call_is_under_it(store):
    def build(tracer):
        with tracer.start_as_current_span("summarise") as step:
            step.set_attribute("session.id", "plain")
            step.set_attribute("gen_ai.usage.input_tokens", 40)
            step.set_attribute("gen_ai.usage.output_tokens", 4)
            with tracer.start_as_current_span("execute_tool fetch") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "fetch")

    send(store, record(build))
    assert totals(store, "plain")[0] == (40, 4)


def test_a_failed_model_call_is_still_the_call_that_counts(store):
    def build(tracer):
        with tracer.start_as_current_span("step") as step:
            step.set_attribute("session.id", "failed-call")
            step.set_attribute("gen_ai.usage.input_tokens", 25)
            with tracer.start_as_current_span("chat gpt-4o") as call:
                call.set_attribute("gen_ai.operation.name", "chat")
                call.set_attribute("gen_ai.request.model", "gpt-4o")
                call.set_attribute("gen_ai.usage.input_tokens", 25)
                call.set_status(Status(StatusCode.ERROR, "429 Too Many Requests"))

    spans = record(build)
    send(store, [spans[0]])  # the failed call (an error event) first, then the step
    send(store, [spans[1]])
    tokens, events = totals(store, "failed-call")
    assert tokens == (25, 0)
    assert sorted(e["event_type"] for e in events) == ["error", "generic"]


def test_events_sent_to_the_events_api_are_never_retracted(store):
    from obsctl.services.ingest import ingest_events

    trace = "5" * 32
    ingest_events(store, [{"session_id": "api", "event_id": f"{trace}:{'a' * 16}", "event_type": "step",
                           "tokens_in": 9, "tokens_out": 1}])
    span = ingest_otlp(store, orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": trace, "spanId": "b" * 16, "parentSpanId": "a" * 16, "name": "chat",
        "startTimeUnixNano": "1763719339000000000", "endTimeUnixNano": "1763719339100000000",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                       {"key": "session.id", "value": {"stringValue": "api"}},
                       {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "3"}}]}]}]}]}), "json")
    assert span.stored == 1
    assert totals(store, "api")[0] == (12, 1)


def test_a_retraction_takes_the_cost_with_the_tokens(store, tmp_path):
    from tests.conftest import use_prices

    use_prices(store, tmp_path)  # gpt-4o: $1 / $2 per million tokens in / out
    chat, task, workflow = record(openllmetry)
    send(store, [workflow, task])  # the task's tokens count, with no model: one unpriced call
    session = get_session(store, "tl-session")
    assert (session["cost_usd"], session["unpriced_calls"]) == (None, 1)
    send(store, [chat])  # the model call: the task's usage is retracted, the call is priced
    session = get_session(store, "tl-session")
    # 80 x $1 + 12 x $2 per million
    assert (session["cost_usd"], session["unpriced_calls"]) == (0.000104, 0)
    task_event = next(e for e in session["events"] if e["metadata"]["span_name"] == "answer.task")
    assert task_event["cost_usd"] is None


def test_a_bad_cache_or_reasoning_count_never_costs_the_span(store):
    """The parts are details of the counts: a part that is not a count is left out (kept with the
    span's attributes), the span and its counts are stored."""
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "session.id": "bad-parts",
             "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
             "gen_ai.usage.cache_read.input_tokens": -5, "gen_ai.usage.reasoning.output_tokens": "lots"}
    result = ingest_otlp(store, orjson.dumps(otlp_request(otlp_span("53995c3f42cd8ad8", attrs=attrs))), "json")
    assert (result.stored, result.rejected) == (1, [])
    event = get_session(store, "bad-parts")["events"][0]
    assert (event["tokens_in"], event["tokens_out"], event["tokens_cache_read"], event["tokens_reasoning"]) == (
        100, 10, None, None)
    assert event["metadata"]["attributes"]["gen_ai.usage.cache_read.input_tokens"] == -5


def test_cache_counts_reported_beside_the_input_are_added_to_it(store):
    """More cached tokens than input tokens: the client counted them apart (Anthropic's API does);
    the input count is made to hold them."""
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-3-5-sonnet-20241022",
             "session.id": "apart", "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20,
             "gen_ai.usage.cache_creation.input_tokens": 1000}
    ingest_otlp(store, orjson.dumps(otlp_request(otlp_span("53995c3f42cd8ad8", attrs=attrs))), "json")
    event = get_session(store, "apart")["events"][0]
    assert (event["tokens_in"], event["tokens_cache_write"]) == (1100, 1000)
    # 100 x $3 + 1000 x $3.75 + 20 x $15 per million
    assert event["cost_usd"] == 0.00435
