"""The bundled demo sample is physically possible, and `make serve` serves it after `make demo`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import get_session, list_sessions
from obsctl.timeutil import ms_between

ROOT = Path(__file__).resolve().parent.parent.parent
GENERATOR = ROOT / "examples" / "generate_demo.py"
SAMPLE = ROOT / "examples" / "demo-events.jsonl"


def generate(*args: str) -> str:
    return subprocess.run([sys.executable, str(GENERATOR), *args], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture(scope="module")
def demo_lines() -> list[str]:
    return generate().splitlines()


def test_the_committed_sample_is_the_generators_output(demo_lines):
    assert SAMPLE.read_text().splitlines() == demo_lines


@pytest.mark.parametrize("args", [(), ("--now",)])
def test_no_step_outlasts_its_session(db, args):
    """Every event lies within its session: no duration exceeds the session's wall-clock time,
    steps do not overlap, and the processing time adds up to no more than the wall-clock time
    (research-002 used to have a 30 s tool call in a 4.45 s session)."""
    import orjson

    ingest_events(db, [orjson.loads(line) for line in generate(*args).splitlines()])
    sessions = list_sessions(db, limit=200)["sessions"]
    assert len(sessions) == 12
    for summary in sessions:
        session = get_session(db, summary["session_id"])
        events = session["events"]
        # A session still running is measured up to its last event, as `explain` does.
        end = session["ended_at"] or events[-1]["timestamp"]
        wall_clock = ms_between(session["started_at"], end)
        processing = 0.0
        previous_end = session["started_at"]
        for e in events:
            duration = e["duration_ms"] or 0
            processing += duration
            assert duration <= wall_clock, (session["session_id"], e["event_id"])
            assert ms_between(previous_end, e["timestamp"]) >= 0, (session["session_id"], e["event_id"])
            previous_end = e["timestamp"]
            if duration:
                finished = ms_between(e["timestamp"], end) - duration
                if session["ended_at"]:
                    assert finished >= 0, (session["session_id"], e["event_id"])
        assert processing <= wall_clock, session["session_id"]


def _make_dry_run(tmp_path: Path, *, demo_db: bool) -> str:
    """The commands `make serve` would run in a checkout (with -n, nothing is run)."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / ".installed").write_text("")  # newer than pyproject.toml
    if demo_db:
        (tmp_path / ".demo").mkdir()
        (tmp_path / ".demo" / "obsctl.db").write_bytes(b"")
    # Under `make test` the parent's MAKEFLAGS/MAKELEVEL would make this a sub-make.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    result = subprocess.run(["make", "--no-print-directory", "-n", "serve"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, check=True)
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_serve_serves_the_demo_database_after_make_demo(tmp_path):
    assert _make_dry_run(tmp_path, demo_db=True).split() == [
        ".venv/bin/obsctl", "--db", ".demo/obsctl.db", "serve"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_serve_without_the_demo_serves_the_default_database(tmp_path):
    assert _make_dry_run(tmp_path, demo_db=False).split() == [".venv/bin/obsctl", "serve"]
