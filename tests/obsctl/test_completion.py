"""Shell completion of values, through the real machinery: `obsctl` run as the shell runs it
(`_OBSCTL_COMPLETE=complete_bash`, COMP_WORDS, COMP_CWORD), reading a real database on both
stores, and completing nothing, silently, when there is no database to read."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import agent_names, session_ids
from tests.conftest import event

OBSCTL = str(Path(sys.executable).parent / "obsctl")


def complete(line: str, env: dict | None = None, shell: str = "bash") -> subprocess.CompletedProcess:
    """What the shell gets for `line` (the cursor at its end: after a space, a new word), as
    completions/obsctl.bash (COMP_WORDS, COMP_CWORD) or obsctl.zsh (_TYPER_COMPLETE_ARGS) ask."""
    words = shlex.split(line) + ([""] if line.endswith(" ") else [])
    full = {**os.environ, **(env or {}), "_OBSCTL_COMPLETE": f"complete_{shell}",
            "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1), "_TYPER_COMPLETE_ARGS": line}
    full = {k: v for k, v in full.items() if v is not None}
    return subprocess.run([OBSCTL], env=full, capture_output=True, text=True, timeout=60)


def values(line: str, env: dict | None = None) -> list[str]:
    result = complete(line, env)
    assert (result.returncode, result.stderr) == (0, ""), result
    return [line for line in result.stdout.splitlines() if line]


@pytest.fixture
def fleet(db, db_url):
    ingest_events(db, [
        event("support-001", "session_start", agent_name="support-bot", event_id="e1"),
        event("support-002", "session_start", agent_name="support-bot", event_id="e2"),
        event("research-001", "session_start", agent_name="research-agent", event_id="e3"),
        event("sub-1", "llm_call", agent_name="supervisor", event_id="e4"),
    ])
    return {"OBSCTL_DB": db_url, "OBSCTL_DATABASE_URL": None, "OBSCTL_URL": None}


def test_agent_names_come_from_the_database(fleet):
    assert values("obsctl triage batch --agent ", fleet) == ["research-agent", "supervisor", "support-bot"]
    assert values("obsctl incidents --agent sup", fleet) == ["supervisor", "support-bot"]
    assert values("obsctl changes --agent supp", fleet) == ["support-bot"]
    assert values("obsctl sla set ", fleet) == ["research-agent", "supervisor", "support-bot"]
    assert values("obsctl alerts rules add --agent-filter re", fleet) == ["research-agent"]
    assert values("obsctl scorecards show x", fleet) == []


def test_session_ids_come_from_the_database(fleet):
    assert values("obsctl explain support-", fleet) == ["support-001", "support-002"]
    assert values("obsctl triage show ", fleet) == ["research-001", "sub-1", "support-001", "support-002"]
    assert values("obsctl compare support-001 r", fleet) == ["research-001"]


def test_the_service_reads_are_prefix_ranges(fleet, db):
    assert agent_names(db, "s", 1) == ["supervisor"]
    assert session_ids(db, "su", 2) == ["sub-1", "support-001"]
    assert session_ids(db, "support-003") == []


@pytest.mark.parametrize(("line", "expected"), [
    ("obsctl sessions list --status ", ["active", "completed", "error"]),
    ("obsctl sessions list --sort ", ["start", "duration", "tokens", "errors", "cost", "-start", "-duration",
                                      "-tokens", "-errors", "-cost"]),
    ("obsctl sessions list --sort d", ["duration"]),
    ("obsctl sessions list --error-type ", ["error", "rate_limit", "timeout"]),
    ("obsctl webhooks deliveries --status p", ["pending"]),
    ("obsctl webhooks add --format ", ["generic", "slack", "pagerduty"]),
    ("obsctl export s1 --format c", ["csv"]),
    ("obsctl ingest --format j", ["jsonl", "json"]),
    ("obsctl alerts rules add --metric avg_", ["avg_duration_ms", "avg_tokens", "avg_cost"]),
    ("obsctl alerts rules add --severity ", ["critical", "error", "warning", "info"]),
    ("obsctl sla set bot error_rate ", ["<=", ">=", "le", "lte", "ge", "gte"]),
    ("obsctl postmortem show s1 --format ", ["md", "json"]),
])
def test_fixed_values_come_from_their_declarations(line, expected):
    assert values(line, {"OBSCTL_DB": "/nonexistent/obsctl.db"}) == expected


def test_db_option_on_the_line_is_the_database_read(fleet, db_url, backend):
    if backend != "sqlite":
        pytest.skip("a file path on the command line")
    assert values(f"obsctl --db {db_url} triage batch --agent r", {"OBSCTL_DB": "/nonexistent/x.db"}) == [
        "research-agent"]


def test_zsh_gets_the_values_with_descriptions(fleet):
    result = complete("obsctl alerts rules add --metric error", fleet, shell="zsh")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == ("_arguments '*: :((\"error_rate\":\"Percent of the window''s events that are "
                             "errors (0-100)\\\\: its error_event_rate\"))'\n")


@pytest.mark.sqlite_only
@pytest.mark.parametrize("where", ["/nonexistent/dir/obsctl.db", "{tmp}/not-a-database.db",
                                   "postgresql://nobody@127.0.0.1:1/none"])
def test_no_database_completes_nothing_silently(tmp_path, where):
    path = where.format(tmp=tmp_path)
    if "not-a-database" in path:
        Path(path).write_text("this is not SQLite")
    for line in ("obsctl triage batch --agent ", "obsctl explain "):
        assert values(line, {"OBSCTL_DB": path, "OBSCTL_DATABASE_URL": None}) == []
    assert not Path("/nonexistent/dir").exists()
    if "not-a-database" in path:
        assert Path(path).read_text() == "this is not SQLite"


@pytest.mark.sqlite_only
def test_a_database_that_does_not_answer_costs_at_most_the_read_timeout(tmp_path):
    from obsctl.cli.completion import READ_TIMEOUT_S
    from obsctl.store.postgres.pg_store import CONNECT_TIMEOUT_S

    started = time.monotonic()
    assert values("obsctl sessions list --status ") == ["active", "completed", "error"]
    start_up = time.monotonic() - started
    # 192.0.2.1 (TEST-NET-1) is never routed: the connection waits for its own timeout.
    started = time.monotonic()
    assert values("obsctl triage batch --agent ", {"OBSCTL_DB": "postgresql://x@192.0.2.1:5432/db"}) == []
    waited = time.monotonic() - started - start_up
    assert waited < (READ_TIMEOUT_S + CONNECT_TIMEOUT_S) / 2, (start_up, waited)


@pytest.mark.sqlite_only
def test_under_url_nothing_is_read(fleet, tmp_path):
    assert values("obsctl --url http://127.0.0.1:9 triage batch --agent ", fleet) == []
