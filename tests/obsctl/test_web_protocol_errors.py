"""Requests waitress cannot parse get JSON error bodies, from a real `obsctl serve` and `printq serve`.

These errors are answered by waitress before Flask sees the request, so only raw sockets against
real servers can produce them.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.conftest import free_port

pytestmark = pytest.mark.e2e

PRINTQ = Path(sys.executable).with_name("printq")
SMALL = Path(__file__).parent.parent / "data" / "printq-small.json"

# (name, raw request, status, waitress' detail)
MALFORMED = [
    ("bad Content-Length", b"POST /events HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
     400, "Content-Length is invalid"),
    ("negative Content-Length", b"POST /events HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
     400, "Content-Length is invalid"),
    ("non-UTF-8 path", b"GET /sessions/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n", 400, "Bad URI"),
    ("bad chunk size",
     b"POST /events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
     400, "Invalid chunk size"),
    ("garbage request line", b"HELLO\r\n\r\n", 400, "Start line is invalid"),
    ("malformed header", b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400, "Invalid header"),
    ("headers over 256 KB", b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n",
     431, "exceeds max_header of 262144"),
    ("unsupported Transfer-Encoding", b"POST /events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
     501, "Transfer-Encoding requested is not supported."),
]


def raw_exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` as is and read the whole response: (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        with contextlib.suppress(OSError):  # the server may answer and close before reading it all
            sock.sendall(request)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:  # closed with our surplus bytes unread; the answer came first
            pass
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in header_lines)}
    return int(status_line.split()[1]), headers, body


@pytest.fixture(scope="module")
def obsctl_port(tmp_path_factory):
    from tests.conftest import start_server

    tmp = tmp_path_factory.mktemp("protocol")
    server = start_server(tmp / "obsctl.db", tmp, {"OBSCTL_RATE_LIMITS": "off"})
    yield server.port
    server.stop()


@pytest.fixture(scope="module")
def printq_port(tmp_path_factory):
    port = free_port()
    env = {**os.environ, "PRINTQ_CACHE_DIR": str(tmp_path_factory.mktemp("printq-cache"))}
    process = subprocess.Popen([str(PRINTQ), "serve", "--port", str(port), "--data", str(SMALL)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            requests.get(f"http://127.0.0.1:{port}/health", timeout=1)
            break
        except requests.RequestException:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail("printq serve did not start")
            time.sleep(0.05)
    yield port
    process.kill()
    process.wait()


@pytest.mark.parametrize("name, request_bytes, status, detail", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_obsctl_answers_malformed_requests_with_a_json_error(obsctl_port, name, request_bytes, status, detail):
    code, headers, body = raw_exchange(obsctl_port, request_bytes)
    assert code == status
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    reason = {400: "bad request", 431: "request header fields too large", 501: "not implemented"}[status]
    assert json.loads(body) == {"error": f"{reason}: {detail}"}


@pytest.mark.parametrize("name, request_bytes, status, detail", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_printq_answers_malformed_requests_with_a_json_message(printq_port, name, request_bytes, status, detail):
    code, headers, body = raw_exchange(printq_port, request_bytes)
    assert code == status
    assert headers["content-type"] == "application/json"
    reason = {400: "Bad Request", 431: "Request Header Fields Too Large", 501: "Not Implemented"}[status]
    assert json.loads(body) == {"Message": f"{reason}: {detail.rstrip('.')}."}


def test_the_server_still_serves_after_malformed_requests(obsctl_port):
    for _, request_bytes, _, _ in MALFORMED:
        raw_exchange(obsctl_port, request_bytes)
    assert requests.get(f"http://127.0.0.1:{obsctl_port}/health", timeout=5).status_code == 200


def test_a_crash_inside_waitress_is_a_json_500_without_details():
    from obsctl.web.protocol_errors import obsctl_error_body
    from printq.server import protocol_error_body

    detail = "Traceback (most recent call last): ..."
    assert obsctl_error_body(500, "Internal Server Error", detail) == {"error": "internal server error"}
    assert protocol_error_body(500, "Internal Server Error", detail) == {"Message": "Internal server error."}


def test_every_listener_of_a_multi_socket_server_gets_json_errors():
    from waitress.server import BaseWSGIServer, create_server

    from obsctl.web.protocol_errors import JsonErrorTask, install_json_errors, obsctl_error_body

    server = create_server(lambda environ, start_response: [], listen="127.0.0.1:0 127.0.0.1:0")
    try:
        listeners = [d for d in server.map.values() if isinstance(d, BaseWSGIServer)]
        install_json_errors(server, obsctl_error_body)
        assert len(listeners) == 2
        assert all(issubclass(listener.channel_class.error_task_class, JsonErrorTask) for listener in listeners)
    finally:
        server.close()
