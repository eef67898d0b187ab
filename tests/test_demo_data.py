"""The bundled demo sample is physically possible."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import get_session, list_sessions
from obsctl.timeutil import ms_between

ROOT = Path(__file__).resolve().parent.parent
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

