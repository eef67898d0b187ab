"""Following events (`obsctl tail`, `GET /events/stream`): the read of events after a
position, the CLI, and the Server-Sent Events stream of a real `obsctl serve`, on both stores."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
import requests

from obsctl.errors import InvalidInput
from obsctl.services.ingest import ingest_events
from obsctl.services.sessions.bulk_export import select_events
from obsctl.services.sessions.follow import events_after, latest_events
from tests.conftest import event

# PostgreSQL shows an event once every transaction older than the one that stored it has
# ended (store/postgres/events.py): on a shared test server that can take a moment.
SETTLE_SECONDS = 20


def settled(read, *, want=lambda page: page.events):
    """`read()` again until `want(page)`, for PostgreSQL's settling; the last page."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        page = read()
        if want(page) or time.monotonic() > deadline:
            return page
        time.sleep(0.05)


def seed(db):
    ingest_events(db, [
        event("s1", "session_start", event_id="a1", agent_name="bot", timestamp="2026-03-01T10:00:00Z"),
        event("s1", event_id="a2", model="gpt-4o", tokens_in=10, tokens_out=4, timestamp="2026-03-01T10:00:01Z"),
    ])
    ingest_events(db, [
        event("s2", "session_start", event_id="b1", agent_name="crawler", timestamp="2026-03-01T09:00:00Z"),
        event("s2", "tool_call", event_id="b2", tool_call={"name": "fetch"}, duration_ms=5,
              timestamp="2026-03-01T09:00:01Z"),
    ])


def event_ids(page) -> list[str]:
    return [e.event["event_id"] for e in page.events]


def test_events_come_in_the_order_they_were_stored_not_by_timestamp(db):
    seed(db)
    page = settled(lambda: events_after(db, None), want=lambda p: len(p.events) == 4)
    assert event_ids(page) == ["a1", "a2", "b1", "b2"]
    assert [e.agent_name for e in page.events] == ["bot", "bot", "crawler", "crawler"]
    assert page.position == page.events[-1].position
    assert page.events[3].event["tool_call"] == {"name": "fetch"} and page.events[3].event["duration_ms"] == 5


def test_a_position_resumes_after_its_event(db):
    seed(db)
    settled(lambda: events_after(db, None), want=lambda p: len(p.events) == 4)
    first = events_after(db, None, limit=2)
    assert event_ids(first) == ["a1", "a2"]
    assert event_ids(events_after(db, first.position)) == ["b1", "b2"]
    everything = events_after(db, None)
    assert events_after(db, everything.position).events == []
    assert events_after(db, everything.position).position == everything.position
    # An event stored later with an old timestamp still comes after the position.
    ingest_events(db, [event("s1", event_id="late", timestamp="2020-01-01T00:00:00Z")])
    assert event_ids(settled(lambda: events_after(db, everything.position))) == ["late"]


def test_filters_apply_to_a_follow(db):
    seed(db)
    settled(lambda: events_after(db, None), want=lambda p: len(p.events) == 4)
    assert event_ids(events_after(db, None, select_events(agents=["crawler"]))) == ["b1", "b2"]
    assert event_ids(events_after(db, None, select_events(session_ids=["s1"], event_types=["llm_call"]))) == ["a2"]
    assert event_ids(events_after(db, None, select_events(event_types=["session_start"]))) == ["a1", "b1"]


def test_latest_events_start_a_follow_from_the_end(db):
    seed(db)
    settled(lambda: events_after(db, None), want=lambda p: len(p.events) == 4)
    start = latest_events(db, count=3)
    assert event_ids(start) == ["a2", "b1", "b2"]
    assert event_ids(latest_events(db, select_events(agents=["bot"]), 5)) == ["a1", "a2"]
    nothing = latest_events(db, select_events(agents=["bot"]), 0)
    assert nothing.events == [] and nothing.position == start.position
    assert events_after(db, nothing.position).events == []


def test_an_empty_store_has_a_start_position(db):
    start = latest_events(db, count=10)
    assert start.events == [] and start.position is not None
    ingest_events(db, [event("s9", event_id="first")])
    assert event_ids(settled(lambda: events_after(db, start.position))) == ["first"]


@pytest.mark.parametrize("position", ["x", "-1", "1-2-3", "9" * 30, ""])
def test_a_position_the_store_never_gave_is_refused(db, backend, position):
    with pytest.raises(InvalidInput, match="is not a position in this server's events"):
        events_after(db, position)


def test_limits_are_checked(db):
    with pytest.raises(InvalidInput, match="limit must be an integer from 1 to 5000; got 0"):
        events_after(db, None, limit=0)
    with pytest.raises(InvalidInput, match="lines must be an integer from 0 to 1000; got 1001"):
        latest_events(db, count=1001)


# --- CLI, without following --------------------------------------------------------------------

def test_tail_prints_the_last_lines_as_text_and_json(db, cli):
    seed(db)
    settled(lambda: events_after(db, None), want=lambda p: len(p.events) == 4)
    result = cli("tail", "-n", "2", "--no-follow")
    assert result.exit_code == 0, result.output
    assert result.stdout == ("2026-03-01T09:00:00.000Z\ts2\tcrawler\tsession_start\n"
                             "2026-03-01T09:00:01.000Z\ts2\tcrawler\ttool_call\ttool fetch 5 ms\n")
    result = cli("tail", "--no-follow", "--json", "--agent", "bot", "--type", "llm_call")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["agent_name"], r["event"]["event_id"]) for r in rows] == [("bot", "a2")]
    assert rows[0]["position"] == latest_events(db, select_events(agents=["bot"]), 1).events[0].position
    assert rows[0]["event"]["tokens_in"] == 10 and rows[0]["event"]["model"] == "gpt-4o"


def test_tail_refuses_bad_options(cli):
    result = cli("tail", "--lines", "-1")
    assert result.exit_code == 2 and "lines must be an integer from 0 to 1000" in result.stderr
    result = cli("tail", "--status", "done")
    assert result.exit_code == 2 and "status must be one of active, completed, error" in result.stderr


# --- Processes: local tail, the event stream, remote tail ---------------------------------------

def _tail_process(*args: str) -> subprocess.Popen:
    # Ctrl-C as a terminal sends it: a suite started in the background (`make test &`) runs
    # with SIGINT ignored, which children inherit, so it is set back to its default first.
    return subprocess.Popen([sys.executable, "-m", "obsctl", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _ingest(db_url: str, *events: dict) -> None:
    lines = "".join(json.dumps(e) + "\n" for e in events).encode()
    subprocess.run([sys.executable, "-m", "obsctl", "--db", db_url, "ingest", "-"], input=lines,
                   check=True, capture_output=True, timeout=60)


def _interrupt(process: subprocess.Popen) -> tuple[int, bytes]:
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    return process.returncode, err


@pytest.mark.e2e
def test_local_tail_prints_events_as_another_process_ingests_them(db, db_url):
    seed(db)
    settled(lambda: events_after(db, None), want=lambda p: len(p.events) == 4)
    tail = _tail_process("--db", db_url, "tail", "-n", "1", "--json", "--agent", "bot")
    try:
        first = json.loads(tail.stdout.readline())
        assert first["event"]["event_id"] == "a2"
        _ingest(db_url, event("s2", event_id="other-agent"), event("s1", event_id="new-1", tokens_in=7))
        second = json.loads(tail.stdout.readline())
        assert (second["agent_name"], second["event"]["event_id"], second["event"]["tokens_in"]) == ("bot", "new-1", 7)
    finally:
        code, err = _interrupt(tail)
    assert code == 130 and err == b""


class SseReader:
    """Server-Sent Events read from a streamed response: (id, data) messages, comments apart."""

    def __init__(self, response: requests.Response):
        self.response = response
        self.lines = response.iter_lines(chunk_size=None)
        self.comments: list[bytes] = []
        self.fields: list[bytes] = []

    def next_message(self) -> dict:
        message: dict = {}
        for line in self.lines:
            if not line:
                if message:
                    return message
                continue
            if line.startswith(b":"):
                self.comments.append(line)
                continue
            name, _, value = line.decode().partition(": ")
            message[name] = value
        raise AssertionError("the stream ended")

    def next_comment(self) -> bytes:
        for line in self.lines:
            if line.startswith(b":"):
                return line
            assert not line, f"a message came before a comment: {line!r}"
        raise AssertionError("the stream ended")


def _stream(server, *, headers=None, **params) -> requests.Response:
    response = requests.get(f"{server.url}/events/stream", params=params, headers=headers or {},
                            stream=True, timeout=(10, 30))
    return response


@pytest.mark.e2e
def test_event_stream_sends_new_events_and_resumes_after_last_event_id(db, db_url, live_server):
    seed(db)
    settled(lambda: events_after(db, None), want=lambda p: len(p.events) == 4)
    server = live_server()
    with _stream(server, lines=2, heartbeat=1) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "text/event-stream; charset=utf-8"
        assert response.headers["Cache-Control"] == "no-cache"
        sse = SseReader(response)
        assert sse.next_message() == {"retry": "2000"}
        backlog = [sse.next_message(), sse.next_message()]
        assert [json.loads(m["data"])["event"]["event_id"] for m in backlog] == ["b1", "b2"]
        assert [m["id"] for m in backlog] == [json.loads(m["data"])["position"] for m in backlog]
        posted = requests.post(f"{server.url}/events", json={"events": [
            event("s1", event_id="live-1"), event("s3", event_id="live-2", agent_name="new")]}, timeout=30)
        assert posted.status_code == 200
        live = [sse.next_message(), sse.next_message()]
        assert [json.loads(m["data"])["event"]["event_id"] for m in live] == ["live-1", "live-2"]
        assert json.loads(live[1]["data"])["agent_name"] == "new"
        # Quiet for a second or more: a heartbeat comment.
        assert sse.next_comment() == b": heartbeat"
    # Reconnecting with the id of the first live event: only what came after it.
    with _stream(server, headers={"Last-Event-ID": live[0]["id"]}, follow="false") as response:
        sse = SseReader(response)
        sse.next_message()
        assert json.loads(sse.next_message()["data"])["event"]["event_id"] == "live-2"


@pytest.mark.e2e
def test_event_stream_refusals(db, live_server):
    server = live_server({"OBSCTL_MAX_STREAMS": "1"})
    answer = requests.get(f"{server.url}/events/stream", headers={"Last-Event-ID": "nonsense"}, timeout=30)
    assert answer.status_code == 400
    assert answer.json() == {"error": "'nonsense' is not a position in this server's events (a position "
                                      "is what a follow gave as an event's id)"}
    assert requests.get(f"{server.url}/events/stream?lines=x", timeout=30).status_code == 400
    with _stream(server, heartbeat=1) as first:
        assert first.status_code == 200
        second = requests.get(f"{server.url}/events/stream", timeout=30)
        assert second.status_code == 503 and second.headers["Retry-After"] == "5"
        assert "already has 1 event streams open" in second.json()["error"]
    # The slot is given back when the client goes away (noticed at the next write).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with _stream(server, follow="false") as again:
            if again.status_code == 200:
                break
        time.sleep(0.5)
    assert again.status_code == 200


@pytest.mark.e2e
def test_remote_tail_follows_the_stream_and_the_server_stops_with_a_stream_open(db, db_url, live_server):
    seed(db)
    settled(lambda: events_after(db, None), want=lambda p: len(p.events) == 4)
    server = live_server()
    tail = _tail_process("--url", server.url, "tail", "-n", "1")
    try:
        assert tail.stdout.readline() == b"2026-03-01T09:00:01.000Z\ts2\tcrawler\ttool_call\ttool fetch 5 ms\n"
        requests.post(f"{server.url}/events", json={"events": [
            event("s1", event_id="r1", model="m", timestamp="2026-03-01T11:00:00Z")]}, timeout=30)
        assert tail.stdout.readline() == b"2026-03-01T11:00:00.000Z\ts1\tbot\tllm_call\tm\n"
        started = time.monotonic()
        assert server.stop(signal.SIGTERM) == 0
        assert time.monotonic() - started < 10  # the open stream ended; no 20 s drain
    finally:
        code, err = _interrupt(tail)
    assert code == 130 and b"Traceback" not in err
