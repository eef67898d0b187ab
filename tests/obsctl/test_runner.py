"""The shared server runner (obsctl/web/runner.py) that `obsctl serve` and `printq serve` use:
a request in flight when SIGTERM arrives is answered in full, new connections are refused,
the clean-up runs, and waitress' own protocol errors carry the caller's JSON body."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import requests

from tests.conftest import free_port

SERVER = textwrap.dedent("""
    import sys, time
    from obsctl.web.runner import listen, run_until_signalled

    BIG = b"x" * (8 << 20)  # more than a socket buffer: the rest goes out after the app returns

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/slow":
            time.sleep(1.5)
            start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BIG)))])
            return [BIG]
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"done " + environ["PATH_INFO"].encode()]

    server = listen(app, host="127.0.0.1", port=int(sys.argv[1]), threads=2, ident="t",
                    error_body=lambda code, reason, detail: {"problem": f"{code} {reason}"})
    run_until_signalled(server, drain_seconds=10,
                        on_ready=lambda s: print("ready", s.effective_port, flush=True),
                        on_stop=lambda: print("cleaned up", flush=True))
    print("returned", flush=True)
""")


def start(port: int) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == f"ready {port}\n"
    return process


def test_sigterm_during_a_slow_request_answers_it_then_stops():
    port = free_port()
    process = start(port)
    answers = []
    request = threading.Thread(target=lambda: answers.append(
        requests.get(f"http://127.0.0.1:{port}/slow", timeout=10)))
    request.start()
    time.sleep(0.5)  # the request is inside the app now, for another second
    process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    try:  # no new connections while draining
        refused = socket.create_connection(("127.0.0.1", port), timeout=1).close() is not None
    except OSError:
        refused = True
    request.join(10)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert [(r.status_code, len(r.content)) for r in answers] == [(200, 8 << 20)]
    assert refused
    assert out == "cleaned up\nreturned\n"


def test_protocol_errors_use_the_callers_json_body():
    port = free_port()
    process = start(port)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n")
            reply = b""
            while chunk := s.recv(4096):
                reply += chunk
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ")
        assert json.loads(body) == {"problem": "400 Bad Request"}
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=10)
    assert process.returncode == 0 and out == "cleaned up\nreturned\n"


def test_a_port_in_use_raises_oserror_from_listen():
    from obsctl.web.runner import listen

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            listen(lambda e, s: [], host="127.0.0.1", port=port, threads=1, ident="t",
                   error_body=lambda *a: {})
        except OSError:
            pass
        else:
            raise AssertionError("listen on a port in use did not raise")
