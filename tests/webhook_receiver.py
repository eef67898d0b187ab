"""A real HTTP receiver on 127.0.0.1 for webhook tests: it can answer 200, answer 500 or
410, answer slowly, drip its answer byte by byte, or not be there at all (started later on
the same port); optionally over TLS."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATUS = {"ok": 200, "slow": 200, "drip": 200, "fail": 500, "gone": 410}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    """Records every request (headers, body) and answers as `mode` says: ok, fail, gone,
    slow (waits `delay` seconds, then answers) or drip (writes its answer one byte every
    `delay` seconds)."""

    def __init__(self, port: int | None = None, mode: str = "ok", delay: float = 0.0,
                 tls: ssl.SSLContext | None = None):
        self.port = port or free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/hook"
        self.mode = mode
        self.delay = delay
        self.tls = tls
        self.requests: list[dict] = []  # every request seen, whatever the answer
        self.accepted: list[dict] = []  # requests answered 2xx (a drip: the whole answer written)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                record = {"headers": dict(self.headers.items()), "body": body, "path": self.path}
                with receiver._lock:
                    receiver.requests.append(record)
                mode = receiver.mode
                status = STATUS[mode]
                payload = b'{"ok": true}' if status == 200 else b"receiver broken"
                if mode == "slow":
                    time.sleep(receiver.delay)
                try:
                    if mode == "drip":
                        self._drip(status, payload)  # accepted only if it got to the end
                    if status == 200:
                        with receiver._lock:
                            receiver.accepted.append(record)
                    if mode != "drip":
                        self.send_response(status)
                        self.send_header("Content-Length", str(len(payload)))
                        self.end_headers()
                        self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (timeout)

            def _drip(self, status: int, payload: bytes) -> None:
                answer = (f"HTTP/1.1 {status} OK\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
                          + payload)
                for i in range(len(answer)):
                    self.wfile.write(answer[i:i + 1])
                    self.wfile.flush()
                    time.sleep(receiver.delay)

            def log_message(self, *args):
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        if self.tls is not None:
            # The handshake happens on the first read, in the handler's thread.
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True,
                                                       do_handshake_on_connect=False)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(5)
            self._server = None

    def wait_for(self, count: int, timeout: float = 10.0) -> bool:
        """Wait until `count` requests were accepted."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.accepted) >= count:
                return True
            time.sleep(0.02)
        return len(self.accepted) >= count
