"""One webhook POST to an address that was checked, within one deadline for all of it.

The connection is made to one of the addresses the caller resolved and checked (never by
resolving the name again), while the Host header, TLS SNI and the certificate check use the
URL's host name: what was checked is what is contacted, and DNS rebinding has nothing to
rebind. Built on http.client, so no proxy setting, redirect or second URL parser is involved.

The deadline covers connecting, the TLS handshake, sending and reading the answer. Socket
timeouts alone would not: they bound each read, and a receiver dripping one byte a second
never trips them. A timer shuts the socket down when the deadline passes, which ends any
read or write in progress.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from obsctl.services.webhooks.url_safety import WebhookUrl


class AttemptTimeout(Exception):
    """The deadline passed before the receiver answered."""


class ConnectFailed(Exception):
    """No checked address accepted a connection."""


@dataclass
class Answer:
    status: int
    reason: str
    body: bytes  # the first bytes of the body of an answer that is not 2xx


class _Watchdog:
    """Shuts the watched connection down at the deadline (ending a blocked read or write)."""

    def __init__(self, deadline: float):
        self.expired = False
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        # A duplicate of the descriptor: shutting it down ends the connection for the
        # (possibly TLS-wrapped) socket in use without touching that object from this thread.
        dup = sock.dup()
        with self._lock:
            self._socks.append(dup)
            expired = self.expired
        if expired:
            _shutdown(dup)

    def _fire(self) -> None:
        with self._lock:
            self.expired = True
            socks = list(self._socks)
        for sock in socks:
            _shutdown(sock)

    def close(self) -> None:
        self._timer.cancel()
        with self._lock:
            for sock in self._socks:
                sock.close()
            self._socks.clear()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # not connected yet, or already closed
        sock.shutdown(socket.SHUT_RDWR)


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise AttemptTimeout
    return left


def _connect(addresses: list[str], port: int, deadline: float, watchdog: _Watchdog) -> socket.socket:
    errors: list[OSError] = []
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(_remaining(deadline))
            sock.connect((address, port))
        except TimeoutError:
            sock.close()
            if time.monotonic() >= deadline:
                raise AttemptTimeout from None
            errors.append(TimeoutError(f"connecting to {address} timed out"))
            continue
        except OSError as exc:
            sock.close()
            errors.append(exc)
            continue
        except BaseException:
            sock.close()
            raise
        watchdog.watch(sock)
        return sock
    raise ConnectFailed(describe_os_error(errors[-1]) if errors else "no address to connect to")


def describe_os_error(exc: OSError) -> str:
    if exc.errno is not None and exc.strerror:
        return f"[Errno {exc.errno}] {exc.strerror}"
    return str(exc) or type(exc).__name__


def post(url: WebhookUrl, addresses: list[str], body: bytes, headers: dict[str, str], *,
         deadline: float, ssl_context: ssl.SSLContext | None = None,
         error_body_bytes: int = 200) -> Answer:
    """POST `body` to `url` through one of `addresses`, finishing before `deadline`
    (a time.monotonic() value).

    Raises AttemptTimeout, ConnectFailed, ssl.SSLError (certificate or handshake problems),
    http.client.HTTPException or OSError (the receiver broke the exchange).
    """
    watchdog = _Watchdog(deadline)
    sock = None
    try:
        sock = _connect(addresses, url.port, deadline, watchdog)
        if url.scheme == "https":
            context = ssl_context or ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=url.host)
        conn = http.client.HTTPConnection(url.host, url.port)
        conn.sock = sock  # already connected: http.client never resolves or connects itself
        sock.settimeout(_remaining(deadline))
        conn.request("POST", url.target, body=body, headers={**headers, "Host": url.host_header})
        response = conn.getresponse()
        text = b"" if 200 <= response.status < 300 else response.read(error_body_bytes)
        if watchdog.expired:
            raise AttemptTimeout
        return Answer(response.status, response.reason, text)
    except (OSError, http.client.HTTPException):
        if watchdog.expired or time.monotonic() >= deadline:
            raise AttemptTimeout from None
        raise
    finally:
        watchdog.close()
        if sock is not None:
            sock.close()
