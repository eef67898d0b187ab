"""Explain a session as Markdown: exact text on a hand-built session, API and CLI."""

import json
import random
import re

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions.explain import explain_session, format_elapsed, md_escape
from tests.conftest import event

EXPECTED = """\
# Session `s1`

- **Agent:** support-bot
- **Status:** error
- **Started:** 2026-03-01T10:00:00.000Z
- **Ended:** 2026-03-01T10:01:06.000Z
- **Duration:** 1m 06.000s (66,000 ms)
- **Tokens:** 120 in, 30 out, 150 total
- **Events:** 6 (1 error)
- **Metadata:** `{"ticket":"T-1"}`

## Timeline

1. **+0.000s** · `session_start`
2. **+1.250s** · `llm_call` · model `gpt-4o` · tokens 120 in / 30 out · 850 ms
   - Input: Where is my order \\*now\\*?
   - Output: Let me check.
3. **+2.000s** · `tool_call` · tool `order_lookup` · 300 ms
   - Tool input: {"id":42}
   - Tool output: {"status":"shipped"}
4. **+2.500s** · `decision`
   - Reasoning: The order shipped; answer with the tracking link.
5. **+1m 05.000s** · `tool_call` · tool `send_email` · 95.5 ms · **❌ ERROR**
   - Tool input: {"to":"a@b.c"}
   - **Error:** SMTP 550 rejected
6. **+1m 06.000s** · `session_end`

## Summary

- **Event types:** `tool_call` 2, `decision` 1, `llm_call` 1, `session_end` 1, `session_start` 1
- **Errors:** 1 (event #5)
- **Models:** `gpt-4o` (1 call, 120 in / 30 out tokens)
- **Cost:** $0.000600 (USD)
- **Tools:** `order_lookup` (1 call, 300 ms), `send_email` (1 call, 95.5 ms)
- **Processing time:** 1,245.5 ms over all events, 415.17 ms on average
"""


def seed(db, session_id="s1"):
    s = session_id
    ingest_events(db, [
        event(s, "session_start", agent_name="support-bot", timestamp="2026-03-01T10:00:00Z",
              metadata={"ticket": "T-1"}),
        event(s, model="gpt-4o", tokens_in=120, tokens_out=30, duration_ms=850,
              timestamp="2026-03-01T10:00:01.250Z",
              input_data={"prompt": "Where is   my\norder *now*?"}, output_data={"text": "Let me check."}),
        event(s, "tool_call", duration_ms=300, timestamp="2026-03-01T10:00:02Z",
              tool_call={"name": "order_lookup", "input": {"id": 42}, "output": {"status": "shipped"}}),
        event(s, "decision", timestamp="2026-03-01T10:00:02.500Z",
              decision_trace={"reasoning": "The order shipped; answer with the tracking link.",
                              "confidence": 0.9}),
        event(s, "tool_call", duration_ms=95.5, timestamp="2026-03-01T10:01:05Z",
              tool_call={"name": "send_email", "input": {"to": "a@b.c"}, "error": "SMTP 550 rejected"}),
        event(s, "session_end", status="error", timestamp="2026-03-01T10:01:06Z"),
    ])


def test_explanation_is_exact(db):
    seed(db)
    assert explain_session(db, "s1") == {"session_id": "s1", "explanation": EXPECTED}


def test_active_session_says_so_and_measures_to_the_last_event(db):
    ingest_events(db, [
        event("live", agent_name="bot", timestamp="2026-03-01T10:00:00Z"),
        event("live", "rate_limit", output_data={"error": "429 slow down"},
              timestamp="2026-03-01T10:00:00.400Z"),
    ])
    text = explain_session(db, "live")["explanation"]
    assert "- **Ended:** not ended (active)\n" in text
    assert "- **Duration:** 400 ms so far\n" in text
    assert "2. **+0.400s** · `rate_limit` · **❌ ERROR**\n   - **Error:** 429 slow down\n" in text
    assert "- **Models:** none\n- **Cost:** no priced call\n- **Tools:** none\n" in text


def test_long_text_is_cut_to_one_line(db):
    ingest_events(db, [event("long", output_data={"text": "word " * 100},
                             decision_trace={"plan": ["a", "b"]})])
    text = explain_session(db, "long")["explanation"]
    output_line = next(line for line in text.splitlines() if line.startswith("   - Output: "))
    assert len(output_line) == len("   - Output: ") + 120
    assert output_line.endswith("word…")
    # A trace without a reasoning text is shown whole.
    assert '   - Reasoning: {"plan":\\["a","b"\\]}\n' in text


def test_markdown_in_user_text_is_escaped():
    assert md_escape("<b>[x](y) `z` a|b") == "\\<b\\>\\[x\\](y) \\`z\\` a\\|b"


def test_format_elapsed():
    assert format_elapsed(0) == "+0.000s"
    assert format_elapsed(59999) == "+59.999s"
    assert format_elapsed(61000) == "+1m 01.000s"
    assert format_elapsed(3723500) == "+1h 02m 03.500s"
    assert format_elapsed(-1500) == "-1.500s"


def test_api_explain(db, client):
    seed(db)
    response = client.get("/sessions/s1/explain")
    assert response.status_code == 200
    assert response.get_json() == {"session_id": "s1", "explanation": EXPECTED}


def test_api_explain_works_for_ids_with_slashes(db, client):
    seed(db, "team/run/7")
    response = client.get("/sessions/team/run/7/explain")
    assert response.status_code == 200
    assert response.get_json()["explanation"].startswith("# Session `team/run/7`\n")


def test_api_explain_unknown_session_is_404(db, client):
    response = client.get("/sessions/nope/explain")
    assert response.status_code == 404
    assert response.get_json() == {"error": "session 'nope' not found"}


def test_cli_json_equals_api_body(db, cli, client):
    seed(db)
    result = cli("explain", "s1", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == client.get("/sessions/s1/explain").get_json()


def test_cli_prints_raw_markdown_when_piped(db, cli):
    seed(db)
    assert cli("explain", "s1").stdout == EXPECTED
    assert cli("explain", "s1", "--raw").stdout == EXPECTED


def test_cli_unknown_session_is_one_line_error(db, cli):
    result = cli("explain", "nope")
    assert result.exit_code == 1
    assert result.stderr == "Error: session 'nope' not found\n"
    assert result.stdout == ""


def _md_escape_by_regex(text: str) -> str:
    """The reference escaping: each special character backslash-escaped, then every CRLF, CR
    or LF replaced by ` <br> `."""
    escaped = re.sub(r"([\\`*\[\]<>|])", r"\\\1", text)
    return re.sub(r"\r\n|\r|\n", " <br> ", escaped)


def test_md_escape_agrees_with_the_regex_reference():
    specials = ["\\", "`", "*", "[", "]", "<", ">", "|", "\r", "\n", "\r\n", "\n\r", "\r\r\n"]
    texts = ["", "plain text", "émoji ✓ ünïcode", " <br> ", "a_b #h ~x"]
    texts += [f"{s}" for s in specials] + [f"a{s}b" for s in specials] + [f"{s}x{s}" for s in specials]
    texts.append("".join(specials) * 2)
    rng = random.Random(3)
    alphabet = ["a", " ", "é", *specials]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(500)]
    for text in texts:
        assert md_escape(text) == _md_escape_by_regex(text), repr(text)
    assert md_escape("no specials here") == "no specials here"
    assert md_escape("a\r\nb\rc\nd") == "a <br> b <br> c <br> d"


def test_timeline_rows_are_the_session_events_in_the_columns_explain_unpacks(db):
    from obsctl.store.sql.sessions import TIMELINE_COLUMNS

    # explain_session unpacks the rows in this order and reads is_error as the last one.
    assert TIMELINE_COLUMNS == ("timestamp", "event_type", "model", "tokens_in", "tokens_out",
                                "duration_ms", "input_data", "output_data", "tool_call",
                                "decision_trace", "is_error")
    seed(db)
    events = list(db.sessions.iter_session_events("s1"))
    rows = db.sessions.session_timeline_rows("s1")
    assert rows == [tuple(e[c] for c in TIMELINE_COLUMNS) for e in events]
    assert sum(1 for r in rows if r[-1]) == 1
