"""CLI output in one place: one `--json` option, one spelling of numbers and of "no value",
user text never read as rich markup, TSV and Markdown rows that stay one line."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from obsctl.cli.output import JSON_HELP, MISSING, fmt_number, tsv_field
from obsctl.services.ingest import ingest_events
from obsctl.timeutil import format_ts
from tests.obsctl.test_cli_help import obsctl_commands

# `[/x]` closes a tag that was never opened (rich raises MarkupError); `[bold]` would vanish.
AGENT = "agent[/x]"
SESSION = "s[bold]x[/bold]"
OTHER = "[bold]x[/bold]"
MODEL = "[red]m[/red]"
TOOL = "t[/x]"


def _ts(minutes_ago: float) -> str:
    return format_ts(datetime.now(UTC) - timedelta(minutes=minutes_ago))


def _session(db, session_id: str, agent: str, *, error: str = "boom [/x]") -> None:
    e = {"session_id": session_id}
    ingest_events(db, [
        {**e, "event_type": "session_start", "agent_name": agent, "timestamp": _ts(30)},
        {**e, "event_type": "llm_call", "model": MODEL, "tokens_in": 1200, "tokens_out": 300,
         "duration_ms": 900, "timestamp": _ts(29), "input_data": {"prompt": "[bold]hi[/bold]"}},
        {**e, "event_type": "tool_call", "duration_ms": 50, "timestamp": _ts(28),
         "tool_call": {"name": TOOL, "input": {"q": "[/q]"}, "error": error}},
        {**e, "event_type": "session_end", "status": "error", "timestamp": _ts(27)},
    ])


# --- one --json option ---------------------------------------------------------------

def test_every_command_that_prints_data_has_the_one_json_option():
    """Every command but `serve` prints data: each takes `--json` (parameter `json_`) with
    the same help text."""
    seen = []
    for path, command in obsctl_commands():
        if getattr(command, "commands", None) and path[-1] != "scorecards":
            continue  # a group; `scorecards` lists by itself, so its callback is a command
        if path[-1] in ("obsctl", "serve"):
            continue
        options = {p.name: p for p in command.params}
        assert "json_" in options, " ".join(path)
        assert options["json_"].opts == ["--json"], " ".join(path)
        assert options["json_"].help == JSON_HELP, " ".join(path)
        seen.append(" ".join(path[1:]))
    # The walk reached every group (no total to edit with each new command).
    assert {"search", "agents", "db reprice", "webhooks retry", "apply", "export-config", "ingest", "incidents",
            "db info", "db copy", "export", "sessions list", "sla history", "changes ack"} <= set(seen)


# --- numbers and missing values ------------------------------------------------------

@pytest.mark.parametrize("value, digits, text", [
    (None, 2, "-"), (None, None, "-"), (1234567, 2, "1,234,567"), (1234.0, 2, "1,234"),
    (1234.567, 2, "1,234.57"), (0.5, 1, "0.5"), (2500.0, None, "2500"), (0.005, None, "0.005"),
    (100 / 3, None, "33.3333"), (7, None, "7"), (True, 2, "True"),
])
def test_fmt_number(value, digits, text):
    assert fmt_number(value, digits) == text


def test_reports_spell_a_rate_without_denominator_as_the_one_missing_value():
    from obsctl.services.rates import format_percent

    assert (format_percent(None), format_percent(62.5)) == (MISSING, "62.5%")


def test_missing_values_are_one_dash_in_text_and_null_in_json(db, cli):
    ingest_events(db, [{"session_id": "s", "event_type": "session_start", "agent_name": "a",
                        "timestamp": _ts(5)}])
    cli("sla", "set", "a", "error_rate", "<=", "5")
    piped = cli("sla", "check").stdout.splitlines()
    assert piped[1].split("\t") == ["a", "error_rate", "<= 5", MISSING, "no_data"]
    assert json.loads(cli("sla", "check", "--json").stdout)["results"][0]["actual_value"] is None


# --- rich never reads user text as markup --------------------------------------------

@pytest.fixture
def hostile(db, cli):
    """Two sessions whose names, models, tools and errors look like rich markup, an SLA
    target and an alert rule on that agent, and one fired alert."""
    _session(db, SESSION, AGENT)
    _session(db, OTHER, OTHER)
    assert cli("sla", "set", AGENT, "error_rate", "<=", "5").exit_code == 0
    assert cli("sla", "check").exit_code == 0
    assert cli("alerts", "rules", "add", "--name", "[bold]rule[/bold]", "--metric", "error_rate",
               "--operator", ">", "--threshold", "1", "--window-minutes", "120",
               "--agent-filter", AGENT).exit_code == 0
    assert cli("alerts", "evaluate").stdout.startswith("FIRED")


TERMINAL_VIEWS = [
    (("sessions", "list"), [SESSION, AGENT, OTHER]),
    (("sessions", "show", SESSION), [SESSION, AGENT, MODEL, TOOL]),
    (("compare", SESSION, OTHER), [f"A = {SESSION}", AGENT, OTHER, MODEL, TOOL]),
    (("analytics",), [AGENT, OTHER, MODEL]),
    (("explain", SESSION), [AGENT, TOOL, "boom [/x]"]),
    (("triage", SESSION), [f"triage {SESSION}", AGENT, TOOL]),
    (("triage", "batch"), [SESSION, AGENT, OTHER]),
    (("postmortem", SESSION), [SESSION, AGENT, TOOL]),
    (("postmortem", "candidates", "--min-errors", "1"), [SESSION, AGENT, OTHER]),
    (("scorecards",), [AGENT, OTHER]),
    (("scorecards", "show", AGENT), [AGENT, "cost/session - (fleet -)"]),
    (("sla", "list"), [AGENT]),
    (("sla", "check"), [AGENT]),
    (("sla", "history"), [AGENT]),
    (("sla", "summary"), [AGENT]),
    (("alerts", "rules", "list"), ["[bold]rule[/bold]", AGENT]),
    (("alerts", "events"), ["[bold]rule[/bold]", AGENT]),
]


@pytest.mark.parametrize("args, shown", TERMINAL_VIEWS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_user_text_is_printed_as_typed_on_a_terminal(hostile, cli, terminal, args, shown):
    result = cli(*args, env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    for text in shown:
        assert text in result.stdout, (text, result.stdout)


# --- TSV: one line per row -----------------------------------------------------------

@pytest.mark.parametrize("value, field", [
    ("a\tb", "a\\tb"), ("a\nb", "a\\nb"), ("a\r\nb", "a\\r\\nb"), ("a\\tb", "a\\\\tb"),
    (None, "-"), (12.5, "12.5"), ("plain", "plain"),
])
def test_tsv_field_escapes_tabs_newlines_and_backslashes(value, field):
    assert tsv_field(value) == field


SPLIT_AGENT = "split\tagent\nnext line\r\\end"
SPLIT_FIELD = "split\\tagent\\nnext line\\r\\\\end"


@pytest.mark.parametrize("args, column", [
    (("sessions", "list"), "agent"),
    (("triage", "batch"), "agent"),
    (("postmortem", "candidates", "--min-errors", "1"), "agent"),
    (("scorecards",), "agent"),
    (("sla", "list"), "agent"),
    (("sla", "check"), "agent"),
])
def test_piped_rows_stay_one_line_with_every_column(db, cli, args, column):
    _session(db, "s1", SPLIT_AGENT, error="line one\nline\ttwo")
    cli("sla", "set", SPLIT_AGENT, "error_rate", "<=", "5")
    result = cli(*args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = lines[0].split("\t")
    assert len(lines) == 2, lines
    row = lines[1].split("\t")
    assert len(row) == len(header)
    assert row[header.index(column)] == SPLIT_FIELD


# --- Markdown: one row per line ------------------------------------------------------

def _table_rows(markdown: str, heading: str) -> list[str]:
    section = markdown.split(f"## {heading}\n\n", 1)[1].split("\n\n", 1)[0]
    return section.splitlines()


def test_postmortem_tables_escape_pipes_and_line_breaks(db, cli):
    _session(db, "pm", "bot", error="first | line\nsecond line")
    ingest_events(db, [{"session_id": "pm", "event_type": "llm_call", "model": "gpt|4\no",
                        "timestamp": _ts(28.5), "tokens_in": 1}])
    markdown = json.loads(cli("postmortem", "pm", "--json").stdout)["markdown"]
    for heading in ("Timeline", "Cost breakdown", "Tool performance"):
        rows = _table_rows(markdown, heading)
        cells = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
        assert len(cells) == 1, (heading, rows)  # every row has the header's columns
    assert "gpt\\|4 <br> o" in markdown


def test_explain_keeps_each_line_break_inside_its_list_item(db, cli):
    ingest_events(db, [
        {"session_id": "ex", "event_type": "session_start", "agent_name": "a|b\n# not a heading",
         "timestamp": _ts(3)},
    ])
    markdown = cli("explain", "ex").stdout
    assert "- **Agent:** a\\|b <br> # not a heading\n" in markdown
    assert "\n# not a heading" not in markdown
