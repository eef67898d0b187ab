"""Explain a session as Markdown: header (with the tags), numbered timeline of every event,
the call tree when events name parents, the scores when there are any, summary.

A session of more than EXPLAIN_EVENTS events (an agent that ran for days) is explained in
bounded time and memory: its timeline shows the first and the last EXPLAIN_ENDS events with a
line saying how many are left out (the export has them all), and no call tree; the header and
summary still cover every event (SQL aggregates)."""

from __future__ import annotations

import re
from datetime import datetime

from orjson import loads as json_loads

from obsctl.jsonutil import dumps, loads_column
from obsctl.services.pricing import format_usd
from obsctl.services.sessions import fields, require_session
from obsctl.services.sessions.conversation import messages_of, turns
from obsctl.services.sessions.fields import excerpt
from obsctl.services.sessions.summary import session_summary
from obsctl.store import Store
from obsctl.text import MISSING, plural
from obsctl.timeutil import parse_ts
from obsctl.vocabulary import child_error

EXCERPT_CHARS = 120
REASONING_CHARS = 300
# The messages of a model call shown in explain: the last ones sent to it, then its reply.
MAX_TURNS = 6
MAX_ERROR_REFS = 20
EXPLAIN_EVENTS = 10_000
EXPLAIN_ENDS = 1_000

# Inline Markdown that user text could trigger (emphasis, code, links, HTML, table pipes).
_MD_SPECIAL = "\\`*[]<>|"
# Each special character backslash-escaped; CR, LF (and CRLF, folded to LF first) as `<br>`.
_MD_ESCAPES = str.maketrans({**{c: "\\" + c for c in _MD_SPECIAL}, "\r": " <br> ", "\n": " <br> "})
_MD_NEEDS_ESCAPE = re.compile(r"[\\`*\[\]<>|\r\n]")


def md_escape(text: str) -> str:
    """Escape user text so it renders literally inside one Markdown line: a list item or a
    table cell (`|` escaped; a line break becomes `<br>`, so a row stays one line)."""
    if _MD_NEEDS_ESCAPE.search(text) is None:
        return text  # the common case: nothing to escape
    return text.replace("\r\n", "\n").translate(_MD_ESCAPES)


def _code(text: str) -> str:
    """Inline code that survives backticks and line breaks in the text."""
    text = " ".join(text.splitlines())
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in re.findall(r"`+", text)) + 1)
    return f"{fence} {text} {fence}"


def _num(value: float | None) -> str:
    if type(value) is int:
        return f"{value:,}"
    if value is None:
        return MISSING
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return f"{int(value):,}"


def format_elapsed(ms: float | None) -> str:
    """`+1.234s`, `+2m 05.120s`, `+1h 02m 03.000s` from the session start."""
    if ms is None:
        return "+?"
    sign = "-" if ms < 0 else "+"
    total = abs(ms) / 1000.0
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours >= 1:
        return f"{sign}{int(hours)}h {int(minutes):02d}m {seconds:06.3f}s"
    if minutes >= 1:
        return f"{sign}{int(minutes)}m {seconds:06.3f}s"
    return f"{sign}{seconds:.3f}s"


def format_duration(ms: float | None) -> str:
    if ms is None:
        return MISSING
    if ms < 1000:
        return f"{_num(ms)} ms"
    return f"{format_elapsed(ms)[1:]} ({_num(ms)} ms)"


def token_counts(summary: dict, number=str) -> str:
    """`3,400 in (2,000 cache read, 1,000 cache write), 80 out (16 reasoning), 3,480 total`:
    the parts only where there are some."""
    def parts(*named: tuple[str, str]) -> str:
        shown = [f"{number(summary[key])} {label}" for key, label in named if summary.get(key)]
        return f" ({', '.join(shown)})" if shown else ""

    return (f"{number(summary['tokens_in'])} in"
            f"{parts(('tokens_cache_read', 'cache read'), ('tokens_cache_write', 'cache write'))}, "
            f"{number(summary['tokens_out'])} out{parts(('tokens_reasoning', 'reasoning'))}, "
            f"{number(summary['total_tokens'])} total")


def _header(session: dict, summary: dict, tags: dict[str, str]) -> list[str]:
    errors = summary["error_count"]
    lines = [
        f"# Session {_code(session['session_id'])}",
        "",
        f"- **Agent:** {md_escape(session['agent_name'])}",
        f"- **Status:** {session['status']}",
        f"- **Started:** {session['started_at']}",
        f"- **Ended:** {session['ended_at'] or 'not ended (active)'}",
        f"- **Duration:** {format_duration(summary['session_duration_ms'])}"
        + ("" if session["ended_at"] else " so far"),
        f"- **Tokens:** {token_counts(summary, _num)}",
        (f"- **Events:** {_num(summary['event_count'])} "
         f"({_num(errors)} error{'' if errors == 1 else 's'})"),
    ]
    metadata = loads_column(session["metadata"])
    if metadata:
        lines.append(f"- **Metadata:** {_code(fields.excerpt(dumps(metadata), 200))}")
    if tags:
        lines.append("- **Tags:** " + ", ".join(_code(f"{k}={v}") for k, v in tags.items()))
    return lines


def _scores(scores: list[dict]) -> list[str]:
    """The scores section: one line per score, oldest first."""
    lines = ["## Scores", ""]
    for s in scores:
        line = f"- {_code(s['name'])} **{_num(s['value'])}** · {s['created_at']}"
        if s["comment"]:
            line += f" · {md_escape(excerpt(s['comment'], REASONING_CHARS))}"
        lines.append(line)
    return lines


def _tree(rows: list[tuple], numbers: dict[str, int]) -> list[str]:
    """The call tree section: a nested list of the events by parent_id, each with the number
    of its timeline entry, its duration and, when it has children, its self time."""
    from obsctl.services.sessions.tree import build_tree, root_note, walk

    events = [{"event_id": r[0], "parent_id": r[1], "timestamp": r[2], "event_type": r[3], "model": r[4],
               "tool_call": r[5], "duration_ms": r[6], "is_error": r[7], "span_name": r[8],
               "child_failed": r[9]} for r in rows]
    lines = ["## Call tree", ""]
    ids = set(numbers)
    for depth, node in walk(build_tree(events)):
        head = [f"#{numbers[node['event_id']]}", _code(node["event_type"])]
        tool = fields.tool_parts(None if node["tool_call"] is None else json_loads(node["tool_call"]))[0]
        if node["span_name"] and node["span_name"] not in (tool, node["model"]):
            head.append(md_escape(str(node["span_name"])))
        if node["model"]:
            head.append(f"model {_code(node['model'])}")
        if tool:
            head.append(f"tool {_code(str(tool))}")
        if node["duration_ms"] is not None:
            head.append(f"{_num(node['duration_ms'])} ms")
            if node["children"] and node["self_time_ms"] is not None:
                head.append(f"self {_num(node['self_time_ms'])} ms")
        if node["is_error"]:
            head.append("**❌ ERROR**")
        elif node["child_failed"]:
            head.append("_failed because a child failed_")
        note = root_note(node, ids) if depth == 0 else None
        if note:
            head.append(f"_{md_escape(note)}_")
        lines.append("  " * depth + "- " + " · ".join(head))
    return lines


def _event_lines(number: int, row: tuple, origin: datetime | None) -> list[str]:
    """The timeline item of one event, a row of the store's session_timeline_rows (its
    TIMELINE_COLUMNS, in that order); `origin` is the session start."""
    (timestamp, event_type, model, tokens_in, tokens_out, duration_ms, input_json, output_json,
     tool_json, trace_json, is_error) = row
    input_data = None if input_json is None else json_loads(input_json)
    output_data = None if output_json is None else json_loads(output_json)
    tool_call = None if tool_json is None else json_loads(tool_json)
    trace = None if trace_json is None else json_loads(trace_json)
    tool_name, tool_input, tool_output = fields.tool_parts(tool_call)

    elapsed = (parse_ts(timestamp) - origin).total_seconds() * 1000.0 if origin and timestamp else None
    head = [f"**{format_elapsed(elapsed)}**", _code(event_type)]
    if model:
        head.append(f"model {_code(model)}")
    if tool_name:
        head.append(f"tool {_code(tool_name)}")
    if tokens_in is not None or tokens_out is not None:
        head.append(f"tokens {_num(tokens_in or 0)} in / {_num(tokens_out or 0)} out")
    if duration_ms is not None:
        head.append(f"{_num(duration_ms)} ms")
    because = child_error(output_data)
    if is_error:
        head.append("**❌ ERROR**")
    elif because:
        head.append("_failed because a child failed_")
    lines = [f"{number}. " + " · ".join(head)]

    shown_output = output_data
    if isinstance(output_data, dict) and ("error" in output_data or "child_error" in output_data):
        # The error gets its own line below; show only what else the output holds.
        shown_output = {k: v for k, v in output_data.items() if k not in ("error", "child_error")} or None
    said, replied = messages_of(input_data), messages_of(shown_output)
    if said and not replied and isinstance(shown_output, dict) and list(shown_output) == ["text"]:
        replied = [{"role": "assistant", "content": shown_output["text"]}]  # a call's text answer
    for label, text, limit in (
        ("Input", None if said else fields.main_text(input_data), EXCERPT_CHARS),
        ("Output", None if replied else fields.main_text(shown_output), EXCERPT_CHARS),
        ("Tool input", tool_input, EXCERPT_CHARS),
        ("Tool output", tool_output, EXCERPT_CHARS),
        ("Reasoning", fields.reasoning_text(trace), REASONING_CHARS),
    ):
        if text is not None:
            line = excerpt(text, limit)
            if line:  # empty when the text is all whitespace
                lines.append(f"   - {label}: {md_escape(line)}")
    if said or replied:
        lines += _conversation(said or [], replied or [])
    if is_error:
        message = fields.error_message(output_data, tool_call) or f"event type {event_type}"
        lines.append(f"   - **Error:** {md_escape(excerpt(message, REASONING_CHARS))}")
    elif because:
        lines.append(f"   - Failed because a child failed: {md_escape(excerpt(because, REASONING_CHARS))}")
    return lines


def _conversation(said: list, replied: list) -> list[str]:
    """The messages of a model call as a conversation: the last MAX_TURNS of what it was sent,
    then its reply, one line each (`- **user:** ...`)."""
    sent = turns(said)
    lines = ["   - Conversation:"]
    if len(sent) > MAX_TURNS:
        lines.append(f"     - _{plural(len(sent) - MAX_TURNS, 'earlier message')}_")
        sent = sent[-MAX_TURNS:]
    answer = turns(replied)
    if answer and answer[-1][0] == "assistant":
        answer[-1] = ("reply", answer[-1][1])  # the call's answer; any before it is history
    for role, text in sent + answer:
        lines.append(f"     - **{md_escape(role)}:** {md_escape(excerpt(text, EXCERPT_CHARS))}")
    return lines if len(lines) > 1 else []


def _summary(summary: dict, error_numbers: list[int] | None) -> list[str]:
    """The summary; `error_numbers` None when the timeline was cut (the errors are counted,
    not numbered)."""
    types = ", ".join(f"{_code(t)} {n}" for t, n in summary["event_types"].items()) or "none"
    lines = ["## Summary", "", f"- **Event types:** {types}"]
    errors = summary["error_count"]
    if errors and error_numbers is None:
        lines.append(f"- **Errors:** {_num(errors)}")
    elif errors and error_numbers is not None:
        refs = ", ".join(f"#{n}" for n in error_numbers[:MAX_ERROR_REFS])
        more = f" and {len(error_numbers) - MAX_ERROR_REFS} more" if len(error_numbers) > MAX_ERROR_REFS else ""
        noun = "event" if len(error_numbers) == 1 else "events"
        lines.append(f"- **Errors:** {_num(errors)} ({noun} {refs}{more})")
    else:
        lines.append("- **Errors:** none")
    models = ", ".join(
        f"{_code(m)} ({_num(v['calls'])} call{'' if v['calls'] == 1 else 's'}, "
        f"{_num(v['tokens_in'])} in / {_num(v['tokens_out'])} out tokens)"
        for m, v in summary["models"].items()
    )
    lines.append(f"- **Models:** {models or 'none'}")
    lines.append(f"- **Cost:** {_cost(summary['cost_usd'], summary['unpriced_calls'])}")
    tools = ", ".join(
        f"{_code(t)} ({_num(v['calls'])} call{'' if v['calls'] == 1 else 's'}, "
        f"{_num(v['total_duration'])} ms)"
        for t, v in summary["tools"].items()
    )
    lines.append(f"- **Tools:** {tools or 'none'}")
    lines.append(f"- **Processing time:** {_num(summary['total_processing_ms'])} ms over all events, "
                 f"{_num(summary['avg_event_duration_ms'])} ms on average")
    return lines


def _cost(cost: float | None, unpriced: int) -> str:
    """`$0.0250 (USD)`, with the calls it leaves out because their model has no known price."""
    text = "no priced call" if cost is None else f"{format_usd(cost)} (USD)"
    if unpriced:
        text += f"; {_num(unpriced)} call{'' if unpriced == 1 else 's'} without a known price"
    return text


def explain_session(store: Store, session_id: str) -> dict:
    """`{"session_id", "explanation"}`: the session as Markdown. Unknown id: NotFound."""
    from obsctl.services.sessions.housekeeping import session_scores, session_tags

    session = require_session(store, session_id)
    summary = session_summary(store, session)
    lines = _header(session, summary, session_tags(store, session_id))
    lines += ["", "## Timeline", ""]
    origin = parse_ts(session["started_at"]) if session["started_at"] else None
    count = session["event_count"] or 0
    if count > EXPLAIN_EVENTS:
        lines += _ends(store, session, origin, count)
        error_numbers = None
    else:
        error_numbers = []
        number = 0
        for number, row in enumerate(store.sessions.session_timeline_rows(session_id), start=1):
            lines += _event_lines(number, row, origin)
            if row[-1]:  # is_error, the last of the timeline columns
                error_numbers.append(number)
        if number == 0:
            lines.append("_No events._")
        tree_rows = store.sessions.session_tree_rows(session_id)
        if any(row[1] is not None for row in tree_rows):  # some event names a parent
            numbers = {row[0]: n for n, row in enumerate(tree_rows, start=1)}
            lines += [""] + _tree(tree_rows, numbers)
    scores = session_scores(store, session_id)
    if scores:
        lines += [""] + _scores(scores)
    lines += [""] + _summary(summary, error_numbers)
    return {"session_id": session["session_id"], "explanation": "\n".join(lines) + "\n"}


def _ends(store: Store, session: dict, origin: datetime | None, count: int) -> list[str]:
    """The timeline of a session too big to show whole: its first and last EXPLAIN_ENDS events."""
    session_id = session["session_id"]
    lines: list[str] = []
    for number, row in enumerate(store.sessions.session_timeline_rows(session_id, EXPLAIN_ENDS), start=1):
        lines += _event_lines(number, row, origin)
    last = store.sessions.session_timeline_rows(session_id, EXPLAIN_ENDS, last=True)
    first_of_last = count - len(last) + 1
    lines += [f"_... {_num(first_of_last - EXPLAIN_ENDS - 1)} events (#{_num(EXPLAIN_ENDS + 1)} to "
              f"#{_num(first_of_last - 1)}) are left out: this explanation shows the first and last "
              f"{_num(EXPLAIN_ENDS)} of a session of more than {_num(EXPLAIN_EVENTS)} events, without its "
              f"call tree. `obsctl export {md_escape(session_id)}` has every event._", ""]
    for number, row in enumerate(last, start=first_of_last):
        lines += _event_lines(number, row, origin)
    return lines
