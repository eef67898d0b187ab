"""GenAI evaluation results become session scores: asserted on the `gen_ai.evaluation.result`
events recorded from a real evaluator (tests/data/otlp/genai-evals/: Splunk's OpenTelemetry GenAI
utilities and their builtin length evaluator), in the order they were sent, the other way round,
and sent twice."""

from __future__ import annotations

from tests.otlp_recordings import RECORDINGS, replay

SESSION = "capture-genai-evals-session-1"
# What the evaluator reported for the short answer, then the long one.
EXPECTED = [("relevance", 0.2753623188405797, "short — Length characters: 19"),
            ("relevance", 0.7816593886462883, "medium — Length characters: 179")]


def _scores(client) -> list[tuple]:
    response = client.get(f"/sessions/{SESSION}")
    assert response.status_code == 200, response.data
    return sorted((s["name"], s["value"], s["comment"]) for s in response.get_json()["scores"])


def test_each_evaluation_result_is_a_score_of_the_judged_session(client):
    assert [(path, status) for path, status, _ in replay(client, "genai-evals")] == [
        ("/v1/traces", 200), ("/v1/logs", 200)]
    assert _scores(client) == EXPECTED
    # An exporter's retry gives nothing twice.
    replay(client, "genai-evals")
    assert _scores(client) == EXPECTED
    # The judged calls keep the results too, with the span's event.
    events = client.get(f"/sessions/{SESSION}").get_json()["events"]
    judged = [e for e in events if e["event_type"] == "llm_call"]
    assert [len(e["metadata"]["gen_ai_events"]) for e in judged] == [1, 1]


def test_results_that_come_before_their_spans_follow_them_into_the_session(client, tmp_path):
    """The logs request first: the records' span is not stored, their trace names no session
    yet; when the spans arrive with the session id, the scores are in that session."""
    folder = tmp_path / "reversed"
    folder.mkdir()
    lines = (RECORDINGS / "genai-evals" / "requests.jsonl").read_text().splitlines()
    (folder / "requests.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    (folder / "bodies").symlink_to(RECORDINGS / "genai-evals" / "bodies")
    assert [status for _, status, _ in replay(client, str(folder))] == [200, 200]
    assert _scores(client) == EXPECTED
    sessions = [s["session_id"] for s in client.get("/sessions").get_json()["sessions"]]
    assert sessions == [SESSION]  # the trace's own session was emptied into it and is gone


def test_the_scores_read_in_explain(client):
    replay(client, "genai-evals")
    text = client.get(f"/sessions/{SESSION}/explain").get_json()["explanation"]
    assert "relevance" in text and "0.78" in text
