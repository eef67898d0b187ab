"""The server's own limits, against real `obsctl serve` processes: bodies refused from their
headers (before the body is read or the key checked), idle and half-sent connections."""

from __future__ import annotations

import http.client
import socket
import time

import orjson
import requests

LIMIT = 100_000


def send_raw(server, head: bytes, body: bytes = b"", timeout: float = 5.0):
    """Send a request head (and part of a body) on a new socket; return (socket, response)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    sock.sendall(head + body)
    response = http.client.HTTPResponse(sock)
    response.begin()
    return sock, response


def post_head(length: int | None, *, key: str | None = None, chunked: bool = False,
              extra: str = "") -> bytes:
    lines = ["POST /events HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    else:
        lines.append(f"Content-Length: {length}")
    if key is not None:
        lines.append(f"X-API-Key: {key}")
    if extra:
        lines.append(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_body_over_the_limit_is_refused_from_its_content_length(live_server):
    server = live_server({"OBSCTL_MAX_BODY_BYTES": str(LIMIT)})
    started = time.monotonic()
    # 300 MB announced, 1 KB sent: the answer must not wait for (or spool) the rest.
    sock, response = send_raw(server, post_head(300_000_000), b"{" * 1024)
    with sock:
        assert response.status == 413
        assert response.getheader("Content-Type") == "application/json"
        assert orjson.loads(response.read()) == {
            "error": f"request body too large; the limit is {LIMIT} bytes"}
    assert time.monotonic() - started < 2
    assert '"POST /events" 413' in server.log()


def test_a_chunked_body_is_refused_once_it_passes_the_limit(live_server):
    server = live_server({"OBSCTL_MAX_BODY_BYTES": str(LIMIT)})
    chunk = b"x" * 50_000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3))  # 150 KB, unfinished
    sock, response = send_raw(server, post_head(None, chunked=True), body)
    with sock:
        assert response.status == 413
        assert "limit is 100000 bytes" in orjson.loads(response.read())["error"]


def test_the_limit_itself_is_allowed(live_server):
    server = live_server({"OBSCTL_MAX_BODY_BYTES": "2000", "OBSCTL_RATE_LIMITS": "off"})
    payload = orjson.dumps({"events": [{"session_id": "edge", "event_id": "edge-1"}]})
    exact = payload + b" " * (2000 - len(payload))
    assert requests.post(f"{server.url}/events", data=exact, timeout=10,
                         headers={"Content-Type": "application/json"}).json()["processed"] == 1
    over = requests.post(f"{server.url}/events", data=exact + b" ", timeout=10,
                         headers={"Content-Type": "application/json"})
    assert over.status_code == 413


def test_a_request_with_a_body_and_no_key_is_refused_before_its_body(live_server):
    server = live_server({"SERVICE_API_KEY": "secret", "OBSCTL_MAX_BODY_BYTES": str(LIMIT),
                          "CORS_ORIGINS": "https://ui.example"})
    # Under the limit, but only 10 of the 90,000 bytes ever come: the 401 must not wait.
    for key, message in ((None, "missing API key: send it in the X-API-Key header"),
                         ("wrong", "invalid API key")):
        sock, response = send_raw(server, post_head(90_000, key=key, extra="Origin: https://ui.example"),
                                  b"{" * 10)
        with sock:
            assert response.status == 401
            assert orjson.loads(response.read()) == {"error": message}
            assert response.getheader("Access-Control-Allow-Origin") == "https://ui.example"
    # Over the limit and unauthenticated: refused as too large, still without reading.
    sock, response = send_raw(server, post_head(100_000_000), b"{")
    with sock:
        assert response.status == 413
    # With the key the same request is read and handled by the app.
    ok = requests.post(f"{server.url}/events", json={"events": [{"session_id": "k"}]},
                       headers={"X-API-Key": "secret"}, timeout=10)
    assert ok.status_code == 200 and ok.json()["processed"] == 1
    assert requests.get(f"{server.url}/health", timeout=10).status_code == 200


def half_sent(server, count: int, data: bytes = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n",
              source: str = "127.0.0.1") -> list:
    """`count` connections from `source` that sent part of a request head (or nothing) and then stall."""
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5, source_address=(source, 0))
        if data:
            sock.sendall(data)
        socks.append(sock)
    return socks


def closed_by_server(sock, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_200_idle_half_sent_connections_do_not_stop_health(live_server):
    server = live_server({"OBSCTL_RATE_LIMITS": "off", "OBSCTL_CONNECTIONS_PER_ADDRESS": "200"})
    socks = half_sent(server, 200, source="127.0.0.2")
    try:
        for path in ("/health", "/sessions"):
            started = time.monotonic()
            assert requests.get(f"{server.url}{path}", timeout=5).status_code == 200
            assert time.monotonic() - started < 1.0
    finally:
        for sock in socks:
            sock.close()


def test_stalled_connections_are_closed_after_the_header_timeout(live_server):
    server = live_server({"OBSCTL_CONNECTION_LIMIT": "20", "OBSCTL_HEADER_TIMEOUT": "1",
                          "OBSCTL_RATE_LIMITS": "off"})
    silent = half_sent(server, 10, b"")
    partial = half_sent(server, 10)
    try:
        # The limit is taken by stalled clients; they are dropped after about a second, so
        # a real client gets in (waiting in the listen backlog meanwhile), well before the
        # 30 s idle timeout.
        started = time.monotonic()
        assert requests.get(f"{server.url}/health", timeout=10).status_code == 200
        assert time.monotonic() - started < 5
        for sock in silent + partial:
            assert closed_by_server(sock, within=3)
        # A client trickling a byte at a time is not idle, but its head is late all the same.
        trickler = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        started = time.monotonic()
        with trickler:
            for byte in b"GET /health HTTP/1.1\r\nHost: x\r\n":
                try:
                    trickler.sendall(bytes([byte]))
                except OSError:
                    break
                if closed_by_server(trickler, within=0.2):
                    break
            assert time.monotonic() - started < 4
            assert closed_by_server(trickler, within=0.1)
        # A keep-alive connection between requests is left alone (only the idle timeout applies).
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        try:
            for pause in (0, 2.5):
                time.sleep(pause)
                conn.request("GET", "/health")
                response = conn.getresponse()
                assert response.status == 200 and response.read()
        finally:
            conn.close()
    finally:
        for sock in silent + partial:
            sock.close()
