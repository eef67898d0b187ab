"""Hostile and careless clients against real `obsctl serve` processes on 127.0.0.1 (issue 32):
bodies nobody may send are refused from their headers, slow bodies and crowds of connections
from one address are cut off, event streams keep to threads of their own, NUL bytes in
parameters are a 400 on both stores, and redirects never name the Host header."""

from __future__ import annotations

import http.client
import re
import socket
import time

import orjson
import pytest
import requests

from tests.obsctl.test_server_limits import closed_by_server, half_sent

KEY = "hostile-key"


def answer_without_body(server, head: str, *, announced: int = 90_000, sent: bytes = b"x" * 10,
                        extra: str = "", source: str = "127.0.0.1"):
    """Send a request head announcing `announced` body bytes and only `sent` of them; the
    (status, headers, JSON) that came back without the rest (a timeout fails the test)."""
    method_path = head
    lines = [f"{method_path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/x-www-form-urlencoded",
             f"Content-Length: {announced}"] + ([extra] if extra else [])
    with socket.create_connection(("127.0.0.1", server.port), timeout=3, source_address=(source, 0)) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + sent)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, dict(response.getheaders()), orjson.loads(response.read())


def login_cookie(server) -> str:
    """A dashboard cookie holding a CSRF token but no login (what GET /ui/login gives)."""
    page = requests.get(f"{server.url}/ui/login", timeout=10)
    return f"obsctl_session={page.cookies['obsctl_session']}"


@pytest.mark.sqlite_only
def test_no_body_is_read_where_no_route_takes_one_or_from_a_stranger(live_server, backend):
    server = live_server({"SERVICE_API_KEY": KEY, "OBSCTL_RATE_LIMITS": "off"})
    key = f"X-API-Key: {KEY}"
    cookie = f"Cookie: {login_cookie(server).split(';')[0]}"
    cases = [
        ("POST /health", "", 405, "method not allowed on this route"),
        ("OPTIONS /events", "", 413, "this route takes no request body"),
        ("GET /sessions", key, 413, "this route takes no request body"),
        ("POST /nowhere", key, 404, "not found: no such route"),
        ("POST /nowhere", "", 401, "missing API key: send it in the X-API-Key header"),
        ("POST /ui/login", "", 400, "the form has expired or did not come from this dashboard: "
                                    "reload the page and try again"),
        ("POST /ui/logout", cookie, 401, "log in first"),
    ]
    for head, extra, status, message in cases:
        got, headers, body = answer_without_body(server, head, announced=2000, extra=extra)
        assert (got, body) == (status, {"error": message}), head
    assert answer_without_body(server, "POST /health")[1]["Allow"] == "GET, HEAD, OPTIONS"
    # A login form is small: 4 KiB at most, refused from its Content-Length even with the cookie.
    got, _, body = answer_without_body(server, "POST /ui/login", announced=5000, extra=cookie)
    assert (got, body) == (413, {"error": "request body too large; the limit is 4096 bytes"})
    # Within the limit and with the dashboard's cookie, the form is read and answered as before.
    session = requests.Session()
    page = session.get(f"{server.url}/ui/login", timeout=10).text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    wrong = session.post(f"{server.url}/ui/login", data={"api_key": "nope", "csrf_token": token}, timeout=10)
    assert wrong.status_code == 401 and "invalid API key" in wrong.text
    assert "refused before reading the body" in server.log()


@pytest.mark.sqlite_only
def test_a_trickled_body_is_dropped_and_a_steady_one_is_read(live_server, backend):
    server = live_server({"OBSCTL_BODY_TIMEOUT": "1", "OBSCTL_BODY_MIN_RATE": "100",
                          "OBSCTL_RATE_LIMITS": "off"})
    head = (b"POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n")
    trickler = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    started = time.monotonic()
    with trickler:
        trickler.sendall(head)
        closed = False
        while time.monotonic() - started < 6 and not closed:
            try:
                trickler.sendall(b" ")  # a byte every 0.25 s: never idle, far below 100 bytes/s
            except OSError:
                closed = True
                break
            closed = closed_by_server(trickler, within=0.25)
        assert closed, "a body trickling far below the minimum rate was never dropped"
        assert time.monotonic() - started < 4
    assert "slower than OBSCTL_BODY_MIN_RATE" in server.log()
    # 600 bytes over 1.5 s stays above the minimum rate once the first second is over: read.
    body = orjson.dumps({"events": [{"session_id": "steady", "event_id": "e1", "event_type": "llm_call"}]})
    body += b" " * (600 - len(body))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("POST", "/events")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders()
    for part in range(6):
        conn.send(body[part * 100:(part + 1) * 100])
        time.sleep(0.25)
    response = conn.getresponse()
    assert response.status == 200 and orjson.loads(response.read())["processed"] == 1
    conn.close()


@pytest.mark.sqlite_only
def test_one_address_cannot_take_every_connection(live_server, backend):
    # The reproduction, small: connections from 127.0.0.2 trickling their bodies used to take the
    # whole connection limit, and /health went unanswered for as long as they went on.
    server = live_server({"OBSCTL_CONNECTION_LIMIT": "20", "OBSCTL_CONNECTIONS_PER_ADDRESS": "10",
                          "OBSCTL_RATE_LIMITS": "off"})
    head = b"POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
    crowd = half_sent(server, 10, head, source="127.0.0.2")
    try:
        refused = []
        for _ in range(15):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=3, source_address=("127.0.0.2", 0))
            crowd.append(sock)
            try:
                sock.sendall(head)
                refused.append(sock.recv(4096))
            except OSError as exc:  # reset after the answer: refused all the same
                refused.append(str(exc).encode())
        assert all(b"429 Too Many Requests" in r or b"reset" in r.lower() for r in refused)
        assert any(b"OBSCTL_CONNECTIONS_PER_ADDRESS" in r for r in refused)
        started = time.monotonic()
        assert requests.get(f"{server.url}/health", timeout=3).status_code == 200
        assert time.monotonic() - started < 1
        # A connection of its own closes: the address may open one again.
        crowd.pop(0).close()
        deadline = time.monotonic() + 3
        while True:
            with socket.create_connection(("127.0.0.1", server.port), timeout=3,
                                          source_address=("127.0.0.2", 0)) as again:
                again.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                first = again.recv(4096)
            if b"200 OK" in first or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert b"200 OK" in first
    finally:
        for sock in crowd:
            sock.close()
    assert "OBSCTL_CONNECTIONS_PER_ADDRESS" in server.log()


@pytest.mark.sqlite_only
def test_event_streams_never_take_the_threads_other_routes_need(live_server, backend):
    server = live_server({"OBSCTL_MAX_STREAMS": "4", "OBSCTL_RATE_LIMITS": "off"}, threads=2)
    streams = [requests.get(f"{server.url}/events/stream?heartbeat=1", stream=True, timeout=10)
               for _ in range(4)]
    try:
        assert all(s.status_code == 200 for s in streams)
        for path in ("/health", "/sessions", "/analytics"):
            started = time.monotonic()
            assert requests.get(f"{server.url}{path}", timeout=3).status_code == 200
            assert time.monotonic() - started < 1, path
        fifth = requests.get(f"{server.url}/events/stream", stream=True, timeout=3)
        assert fifth.status_code == 503 and "OBSCTL_MAX_STREAMS" in fifth.json()["error"]
    finally:
        for s in streams:
            s.close()
    assert "OBSCTL_MAX_STREAMS=4 is more than --threads=2: 4 more threads are kept for event streams" in server.log()


NUL_PATHS = ("/export?agent=%00", "/export?type=a%00b", "/sessions?agent=%00", "/sessions?tag=k%3Dv%00",
             "/sessions/%00", "/sessions/a%00/export", "/events/stream?agent=%00&follow=false",
             "/search?q=a%00", "/triage/x%00", "/sessions?%00=1")


def test_a_nul_byte_in_a_parameter_is_a_400_on_both_stores(live_server, backend):
    server = live_server({"OBSCTL_RATE_LIMITS": "off"})
    for path in NUL_PATHS:
        response = requests.get(f"{server.url}{path}", timeout=10)
        assert response.status_code == 400, path
        assert "NUL character" in response.json()["error"], path
    page = requests.get(f"{server.url}/ui/sessions?agent=%00", timeout=10)
    assert page.status_code == 400 and "NUL character" in page.text
    assert "Traceback" not in server.log() and " 500 " not in server.log()


@pytest.mark.sqlite_only
def test_redirects_never_name_the_host_header(live_server, backend):
    server = live_server({"OBSCTL_RATE_LIMITS": "off"})
    for path, target in (("/sessions//x", "/sessions/x"), ("//sessions//x?limit=5", "/sessions/x?limit=5")):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", "evil.example")
        conn.endheaders()
        response = conn.getresponse()
        assert response.status == 308, path
        assert response.getheader("Location") == target, path
        conn.close()
