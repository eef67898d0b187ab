"""`obsctl prune` and `obsctl db info` through a server print what they print on the database
itself (`db backup`, `db copy` and `serve` refuse --url: test_remote_profiles)."""

from __future__ import annotations

import re

import orjson
import pytest


@pytest.mark.parametrize("args", [
    ("db", "info", "--json"),
    ("db", "info", "--skip-check", "--json"),
])
def test_db_info_describes_the_servers_database(remote, args):
    # The size moves as other tests write (a PostgreSQL database holds every test's schema).
    result = remote.same(*args, volatile=("checked_at", "size_bytes"))
    assert result.exit_code == 0 and "schema" in result.stdout


def test_db_info_prints_the_same_lines(remote):
    here, there = remote.local("db", "info"), remote.remote("db", "info")
    assert here.exit_code == there.exit_code == 0

    def steady(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("size")]

    assert steady(there.stdout) == steady(here.stdout) and "schema version" in here.stdout


def test_db_info_names_the_database_the_server_serves(remote):
    info = orjson.loads(remote.remote("db", "info", "--json").stdout)
    assert info["integrity"]["quick_check"] == "ok"
    assert info["tables"]["sessions"] == 12
    where = info.get("path") or info.get("url")
    assert where and (remote.db_url.endswith(where.rsplit("/", 1)[-1]) or info["backend"] == "postgresql")


@pytest.mark.parametrize("args", [
    ("prune", "--older-than", "3650d", "--dry-run", "--json"),
    ("prune", "--older-than", "0d"),
    ("prune", "--older-than", "9999999999d"),
])
def test_prune_dry_runs_and_bad_ages_are_the_same(remote, args):
    result = remote.same(*args, volatile=("cutoff",))
    if "--dry-run" not in args:
        assert result.exit_code == 2 and "age" in result.stderr


def test_prune_prints_the_same_line_but_for_the_moment_it_ran(remote):
    here, there = (run("prune", "--older-than", "1h", "--dry-run") for run in (remote.local, remote.remote))
    assert here.exit_code == there.exit_code == 0
    moment = re.compile(r"since \S+Z")
    assert moment.sub("since T", there.stdout) == moment.sub("since T", here.stdout)
    assert here.stdout.startswith("would delete 11 sessions and 70 events with no activity since ")


def test_prune_through_the_server_deletes_what_a_dry_run_counted(remote):
    counted = orjson.loads(remote.local("prune", "--older-than", "1h", "--dry-run", "--json").stdout)
    assert counted["sessions"] > 0
    pruned = remote.remote("prune", "--older-than", "1h", "--json")
    assert pruned.exit_code == 0, pruned.output
    done = orjson.loads(pruned.stdout)
    assert (done["sessions"], done["events"], done["dry_run"]) == (counted["sessions"], counted["events"], False)
    assert "complete" not in done  # the same document as locally
    left = orjson.loads(remote.local("prune", "--older-than", "1h", "--dry-run", "--json").stdout)
    assert (left["sessions"], left["events"]) == (0, 0)
