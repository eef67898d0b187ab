"""One failure counts once: a framework that marks a failure on the span where it happened and on
every ancestor (LangChain, LlamaIndex, the Vercel AI SDK) gives one error, on the deepest span;
the ancestors "failed because a child failed". Asserted from the recorded exports of the real
clients, plus the order of arrival (a failed child stored by an earlier request)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import orjson

from obsctl.services.otlp import ingest_otlp
from obsctl.services.sessions import get_session
from obsctl.services.sessions.explain import explain_session
from obsctl.services.sessions.lifecycle import complete_idle_sessions
from tests.otlp_recordings import replay, session_events
from tests.otlp_support import T0, request, span


def _failures(events: list[dict]) -> tuple[list[str], list[str]]:
    """(span names of the errors, span names of the spans that failed because a child did)."""
    errors = [e["metadata"]["span_name"] for e in events if e["is_error"]]
    because = [e["metadata"]["span_name"] for e in events if "child_error" in (e.get("output_data") or {})]
    return errors, because


def test_langchain_one_failure_is_one_error(client, store, cli, terminal, monkeypatch):
    assert [status for _, status, _ in replay(client, "langchain")] == [200]
    session, _ = session_events(client, "capture-langchain-thread-1")
    errors, because = _failures(session["events"])
    # A tool whose failure LangGraph handed to the model (a ToolMessage of status error on a span
    # that is OK), a model call answering 500, and a tool raising: the LangGraph node and the
    # agent run above the last two each failed because of them, and count nothing.
    assert errors == ["lookup_order", "ChatOpenAI", "explode"]
    assert because == ["weather_agent", "model", "weather_agent", "tools"]
    assert session["error_count"] == 3
    ancestors = [e for e in session["events"] if "child_error" in (e.get("output_data") or {})]
    assert {e["event_type"] for e in ancestors} == {"agent_run", "decision"}
    assert all("error" not in e["output_data"] for e in ancestors)
    assert ancestors[-1]["output_data"]["child_error"].startswith("ValueError('exploded: test')")

    # The session's last run failed (because of its tool): it ends `error`, as triage says.
    later = datetime.now(UTC) + timedelta(hours=2)
    assert complete_idle_sessions(store, timedelta(minutes=30), at=later) >= 1
    assert get_session(store, "capture-langchain-thread-1")["status"] == "error"

    text = explain_session(store, "capture-langchain-thread-1")["explanation"]
    assert text.count("   - **Error:** ") == 3  # one per failure in the timeline
    assert text.count("   - Failed because a child failed: ") == 4
    assert text.count("_failed because a child failed_") == 8  # in the timeline and the call tree
    tree = text[text.index("## Call tree"):]
    assert "`decision` · tools" in tree and "**❌ ERROR**" in tree
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: one line per span
    shown = cli("sessions", "show", "capture-langchain-thread-1", "--tree")
    assert shown.exit_code == 0, shown.output
    assert shown.output.count("failed because a child failed") == 4
    assert " decision  model " in shown.output  # span names in the tree


def test_langchain_tool_calls_read_as_the_model_made_them(client):
    """A LangChain tool span's input is the bare argument and its output the serialised
    ToolMessage; the call's arguments come from the LangGraph `tools` node above it, and its
    result (or handled error) from the message's content and status."""
    assert [status for _, status, _ in replay(client, "langchain")] == [200]
    session, by_type = session_events(client, "capture-langchain-thread-1")
    calls = {e["tool_call"]["name"]: e for e in session["events"] if e["tool_call"] and e["tool_call"].get("name")
             in ("get_weather", "lookup_order", "explode")}
    weather, order, explode = calls["get_weather"], calls["lookup_order"], calls["explode"]
    assert weather["tool_call"] == {"name": "get_weather", "input": {"city": "Paris"}, "output": "Paris: sunny, 21 C",
                                    "id": "call_fb6613c924d200"}
    assert (weather["input_data"], weather["output_data"], weather["is_error"]) == (
        {"city": "Paris"}, {"value": "Paris: sunny, 21 C"}, False)
    assert order["tool_call"]["input"] == {"order_id": "A-1"}
    assert order["tool_call"]["error"] == order["output_data"]["error"] == "order service unavailable for A-1"
    assert order["is_error"] is True
    # The raising tool keeps its exception, and gets its arguments too.
    assert explode["tool_call"]["input"] == {"reason": "test"} and explode["event_type"] == "tool_error"
    assert explode["output_data"]["exception_type"] == "ValueError"


def test_llama_index_one_failure_is_one_error(client):
    assert [status for _, status, _ in replay(client, "llama-index")] == [200, 200]
    session, by_type = session_events(client, "capture-llama-index-session-1")
    errors, because = _failures(session["events"])
    assert errors == ["FunctionTool.acall", "OpenAI.astream_chat"]
    assert because == ["FunctionAgent.run", "BaseWorkflowAgent.run_agent_step"]
    assert session["error_count"] == 2


def test_a_failed_child_stored_by_an_earlier_request_counts_for_its_parent(store):
    failed = {"code": 2, "message": "tool exploded"}
    child = span("53995c3f42cd8ad8", parent="00f067aa0ba902b7", name="execute_tool explode",
                 attrs={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "explode",
                        "session.id": "s-order"}, status=failed, start=T0 + 1_000_000)
    parent = span("00f067aa0ba902b7", name="invoke_agent planner",
                  attrs={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner",
                         "session.id": "s-order"}, status=failed, duration_ms=50)
    other = span("00f067aa0ba902b9", name="invoke_agent solo", start=T0 + 2_000_000_000,
                 attrs={"gen_ai.operation.name": "invoke_agent", "session.id": "s-order"},
                 status={"code": 2, "message": "gave up"})
    # The child first, its parent and an unrelated failed run in a later request.
    ingest_otlp(store, orjson.dumps(request(child)), "json")
    ingest_otlp(store, orjson.dumps(request(parent, other)), "json")
    session = get_session(store, "s-order")
    by_name = {e["metadata"]["span_name"]: e for e in session["events"]}
    assert by_name["execute_tool explode"]["event_type"] == "tool_error"
    assert by_name["invoke_agent planner"]["event_type"] == "agent_run"
    assert by_name["invoke_agent planner"]["output_data"] == {"child_error": "tool exploded"}
    # A failed span with no failed child is the failure itself.
    assert by_name["invoke_agent solo"]["event_type"] == "error"
    assert session["error_count"] == 2
    assert json.dumps(session)  # the view stays plain JSON


def test_mcp_tool_calls_and_their_failures(client):
    """The MCP SDK's own spans (tests/data/otlp/mcp/): each `tools/call` is a tool call named by
    `gen_ai.tool.name`; a tool answering a result marked isError and a tool that raised are one
    failure each, and the agent span above them did not fail."""
    assert [status for _, status, _ in replay(client, "mcp")] == [200]
    session, by_type = session_events(client, "capture-mcp-session-1")
    assert session["agent_name"] == "support_agent" and session["background"] is False
    assert [e["tool_call"]["name"] for e in by_type["tool_call"]] == ["get_weather"]
    failed = by_type["tool_error"]
    assert [e["tool_call"]["name"] for e in failed] == ["lookup_order", "explode"]
    assert {e["output_data"]["error"] for e in failed} == {"the tool returned an error result (MCP isError)"}
    assert session["error_count"] == 2 and not by_type["agent_run"][0]["is_error"]
    # The protocol's own requests are steps, named by their method.
    assert [e["metadata"]["span_name"] for e in by_type["generic"]] == ["server/discover", "tools/list"]
