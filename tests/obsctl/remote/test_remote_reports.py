"""Reports through a server: triage, postmortem, SLA and scorecards print what they print on
the database itself, errors and exit codes included, and the SLA commands that change data
change the server's database.

The data is shared by the whole module (the `remote` fixture): a test that writes uses agent
names of its own, and a test that compares both ways reads whatever is there at that moment,
so the tests do not depend on their order."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import free_port

# Fields and text stating when a report was made: the only difference allowed.
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def _unstamped(text: str) -> str:
    return _STAMP.sub("*", text)


def _ingest_session(remote, path, session_id: str, agent: str, days_ago: int, *, failed: bool) -> None:
    """Store a short session started `days_ago` days ago (with a failed tool call and an
    error end when `failed`) in the shared database."""
    start = datetime.now(UTC) - timedelta(days=days_ago)
    stamp = lambda s: (start + timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.000Z")  # noqa: E731
    events = [
        {"event_type": "session_start", "agent_name": agent},
        {"event_type": "llm_call", "model": "gpt-4o", "tokens_in": 100, "tokens_out": 20, "duration_ms": 900},
        {"event_type": "tool_error", "tool_call": {"name": "fetch_url", "input": {}, "error": "HTTP 503"},
         "output_data": {"error": "HTTP 503"}, "duration_ms": 300} if failed else
        {"event_type": "tool_call", "tool_call": {"name": "fetch_url", "input": {}, "output": {}},
         "duration_ms": 300},
        {"event_type": "session_end", "status": "error" if failed else "completed"},
    ]
    path.write_text("".join(json.dumps({"event_id": f"{session_id}-{i}", "session_id": session_id,
                                        "timestamp": stamp(i), **e}) + "\n" for i, e in enumerate(events)))
    loaded = remote.local("ingest", str(path))
    assert loaded.exit_code == 0, loaded.output


@pytest.fixture(scope="module")
def old_failure(remote, tmp_path_factory):
    """A failed session of 60 days ago: outside --days 30, inside the default of all time."""
    _ingest_session(remote, tmp_path_factory.mktemp("old") / "old.jsonl", "archive-001", "archive-bot", 60,
                    failed=True)
    return "archive-001"


# -- triage --------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("triage", "support-004"),
    ("triage", "show", "research-002", "--json"),
    ("triage", "show", "code-003"),
    ("triage", "batch"),
    ("triage", "batch", "--json"),
    ("triage", "batch", "--agent", "research-agent", "--limit", "2", "--min-events", "3"),
    ("triage", "batch", "--agent", "", "--limit", "5", "--json"),
    ("triage", "batch", "--agent", "nobody", "--json"),
])
def test_triage_prints_the_same(remote, args):
    result = remote.same(*args)
    assert result.exit_code == 0 and result.stdout


@pytest.mark.parametrize("args", [
    ("triage", "support-004"),
    ("triage", "research-002"),
    ("triage", "batch", "--limit", "4"),
])
def test_triage_on_a_terminal_prints_the_same(remote, terminal, args):
    result = remote.same(*args)
    assert result.exit_code == 0 and result.stdout


def test_triage_of_a_session_named_batch_works_remotely(remote, tmp_path):
    """GET /triage/batch is the batch; the client names a session "batch" as /triage/%62atch."""
    missing = remote.same("triage", "show", "batch")
    assert missing.exit_code == 1 and "session 'batch' not found" in missing.stderr

    _ingest_session(remote, tmp_path / "batch.jsonl", "batch", "batch-agent", 40, failed=False)
    found = remote.same("triage", "show", "batch", "--json")
    assert found.exit_code == 0 and '"session_id": "batch"' in found.stdout


# -- postmortem ----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("postmortem", "support-004"),
    ("postmortem", "show", "research-002", "--format", "md"),
    ("postmortem", "candidates"),
    ("postmortem", "candidates", "--json"),
    ("postmortem", "candidates", "--min-errors", "2", "--limit", "1", "--days", "7", "--json"),
    ("postmortem", "candidates", "--agent", "code-assistant"),
])
def test_postmortem_prints_the_same(remote, args):
    result = remote.same(*args)
    assert result.exit_code == 0 and result.stdout


def test_postmortem_candidates_days_reaches_the_server(remote, old_failure):
    everything = remote.same("postmortem", "candidates", "--agent", "archive-bot", "--json")
    recent = remote.same("postmortem", "candidates", "--agent", "archive-bot", "--days", "30", "--json")
    assert [c["session_id"] for c in json.loads(everything.stdout)["candidates"]] == [old_failure]
    assert json.loads(recent.stdout)["candidates"] == []


def test_postmortem_on_a_terminal_prints_the_same(remote, terminal):
    result = remote.same("postmortem", "research-002")
    assert result.exit_code == 0 and result.stdout


@pytest.mark.parametrize("args", [
    ("postmortem", "research-002", "--json"),
    ("postmortem", "show", "support-004", "--format", "json"),
])
def test_postmortem_json_differs_only_in_when_it_was_made(remote, args):
    result = remote.same(*args, volatile=("generated_at",))
    assert result.exit_code == 0 and json.loads(result.stdout)["session_id"] in args


@pytest.mark.parametrize("extra", [(), ("--json",)])
def test_postmortem_to_a_file_writes_the_servers_report(remote, tmp_path, extra):
    local, there = tmp_path / "local.out", tmp_path / "remote.out"
    assert remote.local("postmortem", "research-002", "-o", str(local), *extra).exit_code == 0
    result = remote.remote("postmortem", "research-002", "-o", str(there), *extra)
    assert result.exit_code == 0 and result.stdout == ""
    assert f"postmortem of research-002 to {there}" in result.stderr
    assert _unstamped(there.read_text()) == _unstamped(local.read_text())


# -- SLA: reads ----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("sla", "list"),
    ("sla", "list", "--json"),
    ("sla", "history"),
    ("sla", "history", "--json"),
    ("sla", "history", "--agent", "support-bot", "--hours", "1", "--limit", "2", "--json"),
    ("sla", "summary"),
    ("sla", "summary", "--json"),
])
def test_sla_reads_print_the_same(remote, args):
    remote.local("sla", "set", "support-bot", "p95_duration_ms", "<=", "60000")
    remote.local("sla", "check")
    result = remote.same(*args)
    assert result.exit_code == 0 and result.stdout


@pytest.mark.parametrize("terminal_or_not", [True, False])
def test_sla_summary_shows_offenders_and_targets_at_risk_the_same(remote, request, terminal_or_not):
    if terminal_or_not:
        request.getfixturevalue("terminal")
    # Fails: research-agent's error rate is well above 1 %. At risk: code-assistant has 4
    # sessions in the last 24 hours, within 10 % of at most 4.2.
    remote.local("sla", "set", "research-agent", "error_rate", "<=", "1")
    remote.local("sla", "set", "code-assistant", "session_count", "<=", "4.2")
    remote.local("sla", "check")
    result = remote.same("sla", "summary")
    assert result.exit_code == 0
    if terminal_or_not:
        assert "worst offenders" in result.stdout and "at risk" in result.stdout
    else:
        data = json.loads(result.stdout)
        assert data["worst_offenders"] and data["at_risk"]


# -- SLA: changes --------------------------------------------------------------------------


def test_sla_set_remotely_creates_then_updates_the_servers_target(remote):
    created = remote.remote("sla", "set", "remote-set-bot", "error_rate", "<=", "5", "--window-hours", "12")
    assert (created.exit_code, created.stdout) == (0, "created: remote-set-bot error_rate <= 5 over 12h\n")
    updated = remote.remote("sla", "set", "remote-set-bot", "error_rate", "le", "2.5", "--json")
    assert updated.exit_code == 0, updated.output
    target = json.loads(updated.stdout)
    # An update without --window-hours keeps the window, as it does locally.
    assert (target["operator"], target["target_value"], target["window_hours"]) == ("<=", 2.5, 12)
    again = remote.remote("sla", "set", "remote-set-bot", "error_rate", "<=", "2.5")
    assert again.stdout == "updated: remote-set-bot error_rate <= 2.5 over 12h\n"

    stored = [t for t in json.loads(remote.local("sla", "list", "--json").stdout)["targets"]
              if t["agent_name"] == "remote-set-bot"]
    assert len(stored) == 1
    assert {k: v for k, v in stored[0].items() if k != "updated_at"} == \
        {k: v for k, v in target.items() if k != "updated_at"}


def test_sla_set_prints_what_a_local_set_prints(remote):
    """The same command on two fresh targets, one each way: the same words."""
    here = remote.local("sla", "set", "set-here-bot", "p95_duration_ms", ">=", "100")
    there = remote.remote("sla", "set", "set-there-bot", "p95_duration_ms", ">=", "100")
    assert (there.exit_code, there.stderr) == (here.exit_code, here.stderr) == (0, "")
    assert there.stdout == here.stdout.replace("set-here-bot", "set-there-bot")


def test_sla_remove_remotely_removes_the_servers_target(remote):
    assert remote.local("sla", "set", "remote-remove-bot", "error_rate", "<=", "5").exit_code == 0
    removed = remote.remote("sla", "remove", "remote-remove-bot", "error_rate")
    assert (removed.exit_code, removed.stdout) == (0, "removed: remote-remove-bot error_rate\n")
    listed = json.loads(remote.local("sla", "list", "--json").stdout)["targets"]
    assert not [t for t in listed if t["agent_name"] == "remote-remove-bot"]
    # Gone both ways now: the same error.
    gone = remote.same("sla", "remove", "remote-remove-bot", "error_rate")
    assert gone.exit_code == 1
    assert "no SLA target for agent 'remote-remove-bot' and metric 'error_rate'" in gone.stderr


def test_sla_remove_json_prints_the_same(remote):
    for where in (remote.local, remote.remote):
        assert where("sla", "set", "remove-json-bot", "error_rate", "<=", "5").exit_code == 0
    here = remote.local("sla", "remove", "remove-json-bot", "error_rate", "--json")
    assert remote.local("sla", "set", "remove-json-bot", "error_rate", "<=", "5").exit_code == 0
    there = remote.remote("sla", "remove", "remove-json-bot", "error_rate", "--json")
    assert (there.exit_code, there.stdout, there.stderr) == (here.exit_code, here.stdout, here.stderr)
    assert json.loads(there.stdout) == {"deleted": True, "agent_name": "remove-json-bot", "metric": "error_rate"}


def test_sla_check_remotely_records_snapshots_read_locally(remote):
    assert remote.local("sla", "set", "check-bot", "error_rate", "<=", "5").exit_code == 0
    checked = remote.remote("sla", "check", "--json")
    assert checked.exit_code == 0, checked.output
    stamp = json.loads(checked.stdout)["checked_at"]
    history = json.loads(remote.local("sla", "history", "--agent", "check-bot", "--json").stdout)
    assert [(s["checked_at"], s["status"]) for s in history["snapshots"]][:1] == [(stamp, "no_data")]


@pytest.mark.parametrize("args", [
    ("sla", "check"),
    ("sla", "check", "--json"),
    ("sla", "check", "--quiet"),
    ("sla", "check", "--quiet", "--exit-code"),
    ("sla", "check", "--exit-code", "--json"),
])
def test_sla_check_prints_the_same_and_exits_3_on_a_failure(remote, args):
    # support-bot has failed events in the demo data: an error rate of at most 0 fails.
    assert remote.local("sla", "set", "support-bot", "error_rate", "<=", "0").exit_code == 0
    result = remote.same(*args, volatile=("checked_at",))
    assert result.exit_code == (3 if "--exit-code" in args else 0)
    if "--json" in args:
        assert json.loads(result.stdout)["failed"] >= 1
    else:
        assert "support-bot\terror_rate\t<= 0\t" in result.stdout


# -- scorecards ----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("scorecards",),
    ("scorecards", "--json"),
    ("scorecards", "--days", "1", "--json"),
])
def test_scorecards_print_the_same(remote, args):
    result = remote.same(*args)
    assert result.exit_code == 0 and result.stdout


def test_scorecards_on_a_terminal_print_the_same(remote, terminal):
    result = remote.same("scorecards", "--days", "3")
    assert result.exit_code == 0 and "scorecards, last 3 days" in result.stdout


@pytest.mark.parametrize("args", [
    ("scorecards", "show", "support-bot"),
    ("scorecards", "show", "code-assistant", "--days", "2", "--json"),
])
def test_scorecard_differs_only_in_its_window_stamps(remote, args):
    # since/until (and each trend day's start/end) count from now, to the millisecond.
    result = remote.same(*args, volatile=("since", "until", "start", "end"))
    assert result.exit_code == 0 and json.loads(result.stdout)["agent"] == args[2]


def test_scorecard_on_a_terminal_prints_the_same(remote, terminal):
    here, there = remote.local("scorecards", "show", "research-agent"), remote.remote("scorecards", "show", "research-agent")
    assert (there.exit_code, there.stderr) == (here.exit_code, here.stderr) == (0, "")
    assert _unstamped(there.stdout) == _unstamped(here.stdout) and "daily trend" in here.stdout


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("triage", "no-such-session"),
    ("triage", "show", "no-such-session", "--json"),
    ("postmortem", "no-such-session"),
    ("postmortem", "show", "no-such-session", "--format", "json"),
    ("postmortem", "show", "candidates"),
    ("scorecards", "show", "nobody"),
    ("scorecards", "show", "no/such/agent", "--days", "3"),
    ("sla", "set", "", "error_rate", "<=", "1"),
    ("sla", "set", "x" * 300, "error_rate", "<=", "1"),
    ("sla", "remove", "no-such-agent", "error_rate"),
    ("sla", "remove", "", "error_rate"),
    ("sla", "history", "--agent", ""),
    ("sla", "history", "--agent", "x" * 300),
])
def test_errors_are_the_same_message_and_exit_code(remote, args):
    result = remote.same(*args)
    assert result.exit_code == 1 and result.stderr.startswith("Error: ") and result.stdout == ""


@pytest.mark.parametrize("args", [
    ("triage", "batch", "--limit", "0"),
    ("triage", "batch", "--min-events", "x"),
    ("postmortem", "show", "support-004", "--format", "pdf"),
    ("postmortem", "candidates", "--days", "0"),
    ("postmortem", "candidates", "--limit", "-1"),
    ("scorecards", "--days", "0"),
    ("scorecards", "show", "support-bot", "--days", "100000"),
    ("sla", "set", "support-bot", "bogus_metric", "<=", "1"),
    ("sla", "set", "support-bot", "error_rate", "<>", "1"),
    ("sla", "set", "support-bot", "error_rate", "<=", "nan"),
    ("sla", "set", "support-bot", "error_rate", "<=", "1", "--window-hours", "0"),
    ("sla", "remove", "support-bot", "bogus_metric"),
    ("sla", "history", "--hours", "0"),
    ("sla", "history", "--limit", "0"),
])
def test_bad_option_values_are_refused_before_anything_is_sent(remote, args):
    """A bad option value is the same usage error (exit 2) with --url, found before the
    server is asked: even a server that is not there gives it."""
    nowhere = dataclasses.replace(remote, url=f"http://127.0.0.1:{free_port()}")
    here, there = remote.local(*args), nowhere.remote(*args)
    assert (there.exit_code, there.stdout, there.stderr) == (here.exit_code, here.stdout, here.stderr)
    assert here.exit_code == 2 and "Invalid value" in here.stderr
