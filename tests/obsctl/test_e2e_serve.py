"""End-to-end against a real `obsctl serve` process on 127.0.0.1."""

import http.client
import signal
import subprocess
import sys
import threading
import time

import orjson
import pytest
import requests

from tests.conftest import event, free_port
from tests.store_support import open_any


def test_ingest_and_read_back_over_http(live_server):
    server = live_server()
    r = requests.post(f"{server.url}/events", json={"events": [
        event("e2e", "session_start", agent_name="bot", timestamp="2026-04-01T00:00:00Z"),
        event("e2e", tokens_in=12, tokens_out=3, event_id="one"),
        event("e2e", "session_end"),
    ]}, timeout=10)
    assert r.status_code == 200 and r.json()["processed"] == 3
    detail = requests.get(f"{server.url}/sessions/e2e", timeout=10).json()
    assert (detail["status"], detail["total_tokens_in"], len(detail["events"])) == ("completed", 12, 3)
    listing = requests.get(f"{server.url}/sessions", timeout=10).json()
    assert listing["total"] == 1
    assert requests.get(f"{server.url}/openapi.json", timeout=10).json()["openapi"].startswith("3.1")


def test_the_first_line_names_the_database_served(live_server, db_path):
    server = live_server(threads=2)
    first = server.log().splitlines()[0]
    assert first.startswith(f"obsctl serving {db_path} on http://127.0.0.1:{server.port} (2 threads, ")
    assert first.endswith("database quick_check: ok); Ctrl-C to stop")


def test_out_of_range_query_values_are_400_over_http(live_server):
    server = live_server()
    for query in ("limit=-1", "limit=0", "offset=-1", "limit=1_0", "limit=%2010"):
        r = requests.get(f"{server.url}/sessions?{query}", timeout=10)
        assert r.status_code == 400, query
        assert r.json()["error"].startswith(("limit must be", "offset must be", "query parameter 'limit'"))


def test_api_key_over_http(live_server):
    server = live_server({"SERVICE_API_KEY": "k-123"})
    assert requests.get(f"{server.url}/sessions", timeout=10).status_code == 401
    assert requests.get(f"{server.url}/sessions", headers={"X-API-Key": "nope"}, timeout=10).status_code == 401
    assert requests.get(f"{server.url}/sessions", headers={"X-API-Key": "k-123"}, timeout=10).status_code == 200
    assert requests.get(f"{server.url}/health", timeout=10).status_code == 200
    assert "k-123" not in server.log()


def test_rate_limit_429_and_headers_over_http(live_server):
    server = live_server({"OBSCTL_RATE_LIMITS": "events=2/minute"})
    responses = [requests.post(f"{server.url}/events", json={"events": [event()]}, timeout=10) for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert [r.headers["RateLimit-Remaining"] for r in responses] == ["1", "0", "0"]
    assert all(r.headers["RateLimit-Limit"] == "2" for r in responses)
    assert int(responses[2].headers["Retry-After"]) >= 1
    assert responses[2].json()["error"].startswith("rate limit exceeded")


def _open_connection(server) -> http.client.HTTPConnection:
    """A keep-alive connection the server has certainly accepted: one request answered on it."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("GET", "/health")
    response = connection.getresponse()
    response.read()
    assert response.status == 200
    return connection


def _start_post(connection: http.client.HTTPConnection, body: bytes, sent: int) -> None:
    """Send the headers of POST /events and the first `sent` bytes of its body."""
    connection.putrequest("POST", "/events")
    connection.putheader("Content-Type", "application/json")
    connection.putheader("Content-Length", str(len(body)))
    connection.endheaders()
    connection.send(body[:sent])


def test_sigterm_lets_in_flight_requests_finish(live_server, db_url):
    """SIGTERM arrives while requests are in flight: every one of them is answered 200 and
    stored. The signal certainly overlaps them: on each connection (accepted by the server, as
    a first request answered on it proves) the server has received the headers and part of the
    body when the signal is sent, and the rest of the body is sent only after it."""
    server = live_server({"OBSCTL_RATE_LIMITS": "off"})
    bodies = [orjson.dumps({"events": [
        event(f"drain{c}", event_id=f"drain{c}-{i}", input_data={"p": "x" * 2000}) for i in range(500)
    ]}) for c in range(3)]
    connections = [_open_connection(server) for _ in bodies]
    for connection, body in zip(connections, bodies, strict=True):
        _start_post(connection, body, len(body) // 2)
    time.sleep(1.0)  # the server reads what has arrived: each connection now has a request open
    server.process.send_signal(signal.SIGTERM)
    time.sleep(0.5)  # the server has stopped accepting and is draining
    assert server.process.poll() is None, "the server exited with requests in flight"
    answers = []
    for connection, body in zip(connections, bodies, strict=True):
        try:
            connection.send(body[len(body) // 2:])
            response = connection.getresponse()
            answers.append((response.status, orjson.loads(response.read()).get("processed")))
        except (OSError, http.client.HTTPException) as exc:  # dropped: reset, closed, no answer
            answers.append(repr(exc))
        finally:
            connection.close()
    assert answers == [(200, 500)] * len(bodies)
    assert server.process.wait(timeout=30) == 0
    assert "obsctl server stopped" in server.log()
    # What was acknowledged is stored.
    db = open_any(db_url)
    try:
        counts = dict(db.conn.execute("SELECT session_id, COUNT(*) FROM events GROUP BY session_id").fetchall())
    finally:
        db.close()
    assert counts == {f"drain{c}": 500 for c in range(len(bodies))}
    # And a new connection is refused once the server has stopped.
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.url}/health", timeout=5)


def test_port_from_environment(tmp_path):
    port = free_port()
    env = {"PORT": str(port), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sys.executable, "-m", "obsctl", "--db", str(tmp_path / "p.db"), "serve"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if requests.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.05)
        else:
            raise AssertionError("server did not start on $PORT")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
    assert proc.returncode == 0


def test_port_in_use_is_a_one_line_error(live_server, tmp_path):
    server = live_server()
    result = subprocess.run([sys.executable, "-m", "obsctl", "--db", str(tmp_path / "other.db"), "serve",
                             "--port", str(server.port)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert result.stderr.strip().startswith(f"Error: cannot listen on 127.0.0.1:{server.port}")
    assert "Traceback" not in result.stderr


def test_rate_limit_remaining_is_exact_under_concurrency(live_server):
    # Every request gets the remaining count its own hit left: no two concurrent requests repeat
    # a value, so together they show each of limit-1 .. limit-N exactly once.
    limit, clients, per_client = 1000, 16, 6
    server = live_server({"OBSCTL_RATE_LIMITS": f"sessions={limit}/minute"}, threads=8)
    barrier = threading.Barrier(clients)
    remaining: list[int] = []

    def client():
        with requests.Session() as session:
            barrier.wait()
            for _ in range(per_client):
                response = session.get(f"{server.url}/sessions", timeout=30)
                remaining.append(int(response.headers["RateLimit-Remaining"]))

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    total = clients * per_client
    assert sorted(remaining) == list(range(limit - total, limit))
