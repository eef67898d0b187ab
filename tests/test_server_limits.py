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
