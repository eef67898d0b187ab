"""Why a request of the remote client got no answer, read from the exception `requests`
raised: the reason shown, whether the request surely never reached the server, and whether
another try can help (obsctl/client/http.py retries by it). Only exception types are read,
never their text, which may hold the URL's password."""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass

import requests
import urllib3.exceptions


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a request got no answer, read from the exception `requests` raised."""

    reason: str  # short, for the message: "connection refused"
    unsent: bool  # the request surely never reached the server
    retryable: bool = True  # False when another try cannot help (a TLS or DNS failure)


def causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it wraps: arguments, urllib3's `reason`, causes and contexts."""
    seen: set[int] = set()
    todo = [exc]
    while todo and len(seen) < 20:
        item = todo.pop(0)
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo.extend(arg for arg in item.args if isinstance(arg, BaseException))
        todo.extend(e for e in (getattr(item, "reason", None), item.__cause__, item.__context__)
                    if isinstance(e, BaseException))


def classify(exc: requests.RequestException, timeout: float) -> Failure:
    """Read a `requests` exception as a `Failure`. Only the exception types are used, never
    their text, which may hold the URL's password."""
    chain = list(causes(exc))

    def has(*types: type[BaseException]) -> bool:
        return any(isinstance(e, types) for e in chain)

    if has(ssl.SSLCertVerificationError):
        return Failure("the TLS certificate is not trusted", unsent=True, retryable=False)
    if has(requests.exceptions.SSLError, ssl.SSLError, urllib3.exceptions.SSLError):
        return Failure("TLS handshake failed", unsent=True, retryable=False)
    if has(socket.gaierror):  # wrapped in NameResolutionError by urllib3 2
        return Failure("cannot resolve the host name", unsent=True, retryable=False)
    if has(ConnectionRefusedError):
        return Failure("connection refused", unsent=True)
    # urllib3's NewConnectionError is a ConnectTimeoutError too; requests tells them apart.
    if has(requests.exceptions.ConnectTimeout) or any(
            isinstance(e, urllib3.exceptions.ConnectTimeoutError)
            and not isinstance(e, urllib3.exceptions.NewConnectionError) for e in chain):
        return Failure(f"no connection within {timeout:g} s", unsent=True)
    if has(urllib3.exceptions.NewConnectionError):
        reasons = [e.strerror for e in chain if isinstance(e, OSError) and e.strerror]
        return Failure(reasons[0].lower() if reasons else "cannot connect", unsent=True)
    if has(requests.exceptions.ReadTimeout, urllib3.exceptions.ReadTimeoutError, TimeoutError):
        return Failure(f"no answer within {timeout:g} s", unsent=False)
    if has(ConnectionResetError):
        return Failure("connection reset by the server", unsent=False)
    if has(http.client.RemoteDisconnected):
        return Failure("the server closed the connection without answering", unsent=False)
    if has(requests.exceptions.ChunkedEncodingError, http.client.IncompleteRead,
           urllib3.exceptions.ProtocolError):
        return Failure("the answer was cut off", unsent=False)
    if isinstance(exc, requests.exceptions.ConnectionError):
        return Failure("connection failed", unsent=False)
    return Failure(f"request failed ({type(exc).__name__})", unsent=True, retryable=False)
