"""Connection limits of `obsctl serve` on waitress, beyond its own idle timeout and total limit:

- connections per client address (OBSCTL_CONNECTIONS_PER_ADDRESS, 100): one more from the same
  address is answered 429 and closed at once, so one client cannot take the whole
  OBSCTL_CONNECTION_LIMIT; the proxies of OBSCTL_TRUSTED_PROXIES carry many clients and are not
  limited (their clients are, by the rate limits);
- request headers must be complete OBSCTL_HEADER_TIMEOUT seconds after the request began (or,
  for a new connection, after it was accepted);
- a body must arrive at OBSCTL_BODY_MIN_RATE bytes a second on average, after a first
  OBSCTL_BODY_TIMEOUT seconds: a body of n bytes may take BODY_TIMEOUT + n / BODY_MIN_RATE
  seconds. waitress closes connections idle for longer than its channel_timeout, but a client
  that sends a byte now and then (slowloris) never looks idle.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections import Counter

import orjson

from obsctl.config import Settings
from obsctl.web.client_address import is_trusted

log = logging.getLogger("obsctl.server")
access_log = logging.getLogger("obsctl.access")
# Say at most this often that connections were refused for their address.
_WARN_EVERY = 10.0


class CountedChannel:
    """A channel mixin keeping the server's count of open connections per address."""

    def __init__(self, server, sock, addr, adj, map=None):
        super().__init__(server, sock, addr, adj, map=map)
        self._counted_as = _host(addr)
        counts = getattr(server, "obsctl_connections", None)
        if counts is not None:
            counts[self._counted_as] += 1

    def del_channel(self, map=None):
        host, self._counted_as = getattr(self, "_counted_as", None), None
        counts = getattr(self.server, "obsctl_connections", None)
        if host is not None and counts is not None:
            counts[host] -= 1
            if counts[host] <= 0:
                del counts[host]
        super().del_channel(map)


def _host(addr) -> str:
    return str(addr[0]) if isinstance(addr, tuple) and addr else str(addr)


def install(server, settings: Settings) -> None:
    server.obsctl_connections = Counter()
    server.handle_accept = _accept_within_limit(server, settings.connections_per_address,
                                                settings.trusted_proxies)
    server.maintenance = _with_request_timeouts(server, server.maintenance, settings)


def _accept_within_limit(server, per_address: int, trusted):
    """waitress' handle_accept, refusing an address that has `per_address` connections open."""
    refused = {"count": 0, "since": time.monotonic(), "hosts": set()}
    body = orjson.dumps({"error": f"too many connections from this address (at most {per_address}, "
                                  f"OBSCTL_CONNECTIONS_PER_ADDRESS); close some and retry"})
    answer = (b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
              b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    def handle_accept():
        try:
            accepted = server.accept()
            if accepted is None:
                return
            conn, addr = accepted
            server.set_socket_options(conn)
        except OSError:
            return  # as waitress does: a socket gone before it could be set up
        addr = server.fix_addr(addr)
        host = _host(addr)
        if server.obsctl_connections[host] >= per_address and not is_trusted(host, trusted):
            _refuse(conn, answer)
            _note_refusal(refused, host, per_address)
            return
        server.channel_class(server, conn, addr, server.adj, map=server._map)

    return handle_accept


def _refuse(conn: socket.socket, answer: bytes) -> None:
    try:
        conn.setblocking(False)
        with contextlib.suppress(OSError):
            conn.recv(65536)  # what already came, so that closing does not reset the answer away
        conn.send(answer)
    except OSError:
        pass
    finally:
        conn.close()


def _note_refusal(refused: dict, host: str, per_address: int) -> None:
    refused["count"] += 1
    refused["hosts"].add(host)
    now = time.monotonic()
    if now - refused["since"] >= _WARN_EVERY or refused["count"] == 1:
        log.warning("refused %d connections from %s: over %d open connections from one address "
                    "(OBSCTL_CONNECTIONS_PER_ADDRESS)", refused["count"], ", ".join(sorted(refused["hosts"])[:5]),
                    per_address)
        refused.update(count=0, since=now, hosts=set())


def _with_request_timeouts(server, idle_maintenance, settings: Settings):
    """The server's maintenance (closing idle connections), plus the header and body timeouts."""
    header_timeout = settings.header_timeout
    body_timeout, min_rate = settings.body_timeout, settings.body_min_rate

    def maintenance(now: float) -> None:
        idle_maintenance(now)
        cutoff = now - header_timeout
        for channel in list(server.active_channels.values()):
            if channel.requests:
                continue  # a request is being handled; its connection is busy, not stalled
            request = channel.request
            if request is None:
                if not getattr(channel, "requests_started", 1) and channel.creation_time < cutoff:
                    channel.will_close = True  # connected, and not a byte of a request since
                continue  # else between requests on a keep-alive connection: the idle timeout applies
            if not request.headers_finished:
                started = getattr(request, "started", None)
                if started is not None and started < cutoff:
                    channel.will_close = True
                continue
            body_started = getattr(request, "body_started", None)
            if body_started is None or request.completed:
                continue
            received = request.body_bytes_received
            if now - body_started > body_timeout + received / min_rate:
                channel.will_close = True
                if access_log.isEnabledFor(logging.INFO):
                    access_log.info('%s "%s %s" closed: %d bytes of the body in %.0f s, slower than '
                                    'OBSCTL_BODY_MIN_RATE (%d bytes/s after %d s)', request.client,
                                    request.command, request.path, received, now - body_started,
                                    min_rate, body_timeout)

    return maintenance
