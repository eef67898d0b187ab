"""`obsctl triage`: the default command, batch, output forms and exit codes."""

from __future__ import annotations

import json

import pytest

from tests import triage_scenarios as sc


@pytest.fixture
def run(cli, tmp_path):
    prices = sc.write_prices(tmp_path)
    return lambda *args: cli(*args, env={"OBSCTL_PRICES": str(prices)})


def test_triage_id_is_short_for_show(db, run):
    sc.rate_limit_cascade(db)
    short, long = run("triage", "rl", "--json"), run("triage", "show", "rl", "--json")
    assert short.exit_code == long.exit_code == 0
    assert json.loads(short.stdout) == json.loads(long.stdout)
    assert json.loads(short.stdout)["health_score"] == 36.7


def test_piped_show_prints_json(db, run):
    sc.clean_session(db)
    result = run("triage", "clean")
    assert json.loads(result.stdout)["severity"] == "healthy"


def test_terminal_show_renders_a_panel(db, run, terminal):
    sc.rate_limit_cascade(db)
    out = run("triage", "rl").stdout
    assert "Health 36.7/100" in out and "grade F" in out and "CRITICAL" in out
    assert "Tool web_search failed 1 of 1 call(s) (100.0%)" in out
    assert "→ The agent already backs off" in out
    assert "3 are needed" in out  # the baseline note


def test_batch_plain_table_when_piped(db, run):
    sc.rate_limit_cascade(db)
    sc.runaway_loop(db)
    lines = run("triage", "batch").stdout.splitlines()
    assert lines[0].split("\t") == ["score", "grade", "severity", "session_id", "agent", "error_events",
                                    "body_events", "error_event_rate", "top finding"]
    assert [line.split("\t")[:8] for line in lines[1:]] == [
        ["36.7", "F", "critical", "rl", "researcher", "5", "6", "83.33"],
        ["89.9", "B+", "warning", "loop", "crawler", "0", "15", "0.0"]]


def test_unknown_session_exits_1_with_one_line(db, run):
    result = run("triage", "nope")
    assert result.exit_code == 1
    assert result.stderr == "Error: session 'nope' not found\n"
    assert result.stdout == ""


def test_usage_errors_exit_2(db, run):
    assert run("triage", "batch", "--limit", "many").exit_code == 2
    assert run("triage", "show").exit_code == 2


def test_help_ends_with_an_example(run):
    for args in (("triage", "--help"), ("triage", "show", "--help"), ("triage", "batch", "--help")):
        result = run(*args)
        assert result.exit_code == 0
        assert "Example: obsctl triage" in result.stdout
