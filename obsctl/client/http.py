"""The HTTP client of remote mode: one `requests.Session` talking to an `obsctl serve`.

Every request goes through `Client.request`, which retries what is safe to retry and turns
every failure into one of obsctl's own exceptions, so the CLI reports a remote failure the way
it reports a local one: one line, exit 1. A 4xx answer carries the server's own message
unchanged (the same text the command prints in local mode); a 5xx answer or a connection
failure names the server by its URL, with any password masked. The API key never appears in
a message.

Retries: a request that never reached the server (connection refused, no connection within
the timeout) is tried again whatever its method. One that may have reached it (no answer in
time, connection reset or closed mid-answer) is tried again only when repeating it is
harmless: GET, HEAD, PUT, DELETE, or a POST the caller declares idempotent. 429 and 503
answers are tried again for every method, since the server refused the request before doing
anything. Waits grow as `backoff * 2**attempt` plus up to half of that again at random,
capped at `max_wait`; a `Retry-After` on the answer replaces that wait (also capped).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import orjson
import requests

from obsctl import __version__
from obsctl.client.failures import Failure, classify
from obsctl.config import display_url
from obsctl.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    ObsctlError,
    PayloadTooLarge,
    QueryTimeout,
    ServiceUnavailable,
    StorageError,
    StorageFull,
    Unauthorized,
)

USER_AGENT = f"obsctl/{__version__}"
# Methods that may be repeated without changing the outcome (RFC 9110, 9.2.2).
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
# Answers meaning "not now": the server did nothing with the request, so any method is retried.
RETRY_STATUSES = frozenset({429, 503})
# Answers whose `error` text is shown as the server wrote it: the same message as in local
# mode, where the service raises the same class.
ERROR_BY_STATUS: dict[int, type[ObsctlError]] = {
    400: InvalidInput,
    422: InvalidInput,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    504: QueryTimeout,
}
# A server's error text longer than this is cut: a message is one line.
MAX_MESSAGE_CHARS = 300


class Client:
    """An `obsctl serve` reached over HTTP at `base_url`, which may carry a path prefix
    (`http://host:8080/obsctl`).

    `timeout` bounds connecting and each wait for data, in seconds; `retries` is how many
    times a failed request is tried again. `session` (default: a new one, closed by `close`)
    and `sleep` may be passed in; tests pass a `sleep` that records its waits.
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 retries: int = 4, backoff: float = 0.5, max_wait: float = 30.0,
                 session: requests.Session | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        if timeout <= 0 or retries < 0 or backoff < 0 or max_wait < 0:
            raise InvalidInput("the client needs timeout > 0, retries >= 0, backoff >= 0 and max_wait >= 0")
        self.base_url = _check_base_url(base_url)
        self.server = display_url(self.base_url)  # how messages name the server
        self._api_key = _check_api_key(api_key)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        self._owns_session = session is None
        self._session = session if session is not None else requests.Session()
        self._sleep = sleep
        self._random = random.Random()

    def __repr__(self) -> str:  # never the key
        return f"Client({self.server!r})"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the session's connections, if the session is the client's own."""
        if self._owns_session:
            self._session.close()

    def url(self, path: str) -> str:
        """The full URL of `path` (`/sessions`), below the base URL's path prefix."""
        return f"{self.base_url}/{path.lstrip('/')}"

    # -- JSON helpers ---------------------------------------------------------------------

    def get_json(self, path: str, params: Mapping[str, Any] | None = None, *,
                 timeout: float | None = None) -> Any:
        """GET `path` and return the decoded JSON body (`timeout`: this request's own)."""
        return self.decode(self.request("GET", path, params=params, timeout=timeout))

    def post_json(self, path: str, body: Any, params: Mapping[str, Any] | None = None, *,
                  idempotent: bool = False) -> Any:
        """POST `body` as JSON and return the decoded answer. A POST that may have reached the
        server is not repeated after a timeout or reset unless `idempotent` says it is safe."""
        return self.decode(self.request("POST", path, params=params, json=body, idempotent=idempotent))

    def put_json(self, path: str, body: Any, params: Mapping[str, Any] | None = None) -> Any:
        """PUT `body` as JSON and return the decoded answer."""
        return self.decode(self.request("PUT", path, params=params, json=body))

    def delete(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """DELETE `path` and return the decoded answer (None for an empty one)."""
        return self.decode(self.request("DELETE", path, params=params))

    # -- the one request loop -------------------------------------------------------------

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                json: Any = None, data: bytes | str | None = None,
                headers: Mapping[str, str] | None = None,
                idempotent: bool | None = None, stream: bool = False,
                timeout: float | None = None) -> requests.Response:
        """Send one request, retrying as the module docstring says, and return the 2xx answer
        (its body read). Anything else raises an obsctl error.

        `json` is encoded with orjson; `data` is sent as is. `idempotent` overrides what the
        method implies (None: GET, HEAD, OPTIONS, PUT and DELETE are; POST and PATCH are not).
        A body that is not bytes or text (a file, a generator) cannot be sent twice, so such a
        request is tried once. With `stream` the 2xx answer's body is left unread, for
        `iter_content` (an export of any size in bounded memory). `timeout` replaces the
        client's own for this request (one known to take long on the server).
        """
        method = method.upper()
        all_headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self._api_key:
            all_headers["X-API-Key"] = self._api_key
        if json is not None:
            data = orjson.dumps(json)
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        repeatable = method in IDEMPOTENT_METHODS if idempotent is None else idempotent
        replayable = data is None or isinstance(data, bytes | str)
        url = self.url(path)
        tries = 1 + (self.retries if replayable else 0)
        for attempt in range(tries):
            last = attempt == tries - 1
            try:
                response = self._send(method, url, params=params, data=data, headers=all_headers,
                                      stream=stream, timeout=timeout or self.timeout)
            except requests.RequestException as exc:
                failure = classify(exc, timeout or self.timeout)
                held_back = not failure.unsent and not repeatable
                if last or held_back or not failure.retryable:
                    raise self._unreachable(failure, attempt + 1, method if held_back else None) from None
                self._sleep(self._backoff_wait(attempt))
                continue
            if 200 <= response.status_code < 300:
                return response
            if response.status_code in RETRY_STATUSES and not last:
                wait = retry_after_seconds(response.headers.get("Retry-After"))
                response.close()
                self._sleep(min(wait, self.max_wait) if wait is not None else self._backoff_wait(attempt))
                continue
            raise self._error(response) from None
        raise AssertionError("unreachable: the last try returns or raises")  # pragma: no cover

    def _send(self, method: str, url: str, *, params, data, headers, stream: bool,
              timeout: float) -> requests.Response:
        """`Session.request`, except that the path goes out as written: requests would decode
        escapes of unreserved characters (`%62atch` -> `batch`, `%2E.` -> `..`), and api_path
        writes those escapes so that an id never reads as a route (web/rawpath.py)."""
        session = self._session
        prepared = session.prepare_request(requests.Request(method, url, params=params, data=data,
                                                            headers=headers))
        path = urlsplit(url).path
        sent_url = str(prepared.url)
        if "%" in path and path.isascii():
            sent_url = prepared.url = urlsplit(sent_url)._replace(path=path).geturl()
        sending = session.merge_environment_settings(sent_url, {}, stream, None, None)
        # Redirects are not followed: requests would carry X-API-Key to any host.
        return session.send(prepared, timeout=timeout, allow_redirects=False, **sending)

    def _backoff_wait(self, attempt: int) -> float:
        """`backoff * 2**attempt` plus up to half of that again, capped at `max_wait`."""
        wait = min(self.max_wait, self.backoff * 2**attempt)
        return min(self.max_wait, wait + self._random.uniform(0, wait / 2))

    # -- answers into values or errors ----------------------------------------------------

    def decode(self, response: requests.Response) -> Any:
        """The JSON body of a 2xx answer from `request` (None when it is empty)."""
        if not response.content:
            return None
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise ServiceUnavailable(
                f"the obsctl server at {self.server} answered HTTP {response.status_code} with "
                f"{_body_kind(response)}, not JSON; is that the URL of an obsctl server?") from None

    def _error(self, response: requests.Response) -> ObsctlError:
        """The obsctl error for a non-2xx answer."""
        status = response.status_code
        if 300 <= status < 400:
            where = display_url(response.headers.get("Location") or "") or "nowhere"
            return InvalidInput(f"the obsctl server at {self.server} redirects to {self._scrub(where)} "
                                f"(HTTP {status}); use that URL instead")
        text, details = _error_body(response)
        retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        wait = max(1, math.ceil(retry_after)) if retry_after is not None else 1
        if text is None:
            said = f"HTTP {status} with {_body_kind(response)}, not an obsctl error"
        else:
            said = f"HTTP {status}: {self._scrub(text)}"
        if status in (401, 403):
            trouble = "refused the API key" if self._api_key else "needs an API key, and none was given"
            return Unauthorized(f"the obsctl server at {self.server} {trouble} ({said})")
        if status == 429:
            return ServiceUnavailable(f"rate limited by {self.server}; retry after {wait} s", retry_after=wait)
        if status in ERROR_BY_STATUS:
            cls = ERROR_BY_STATUS[status]
            if text is None:
                return cls(f"the obsctl server at {self.server} answered {said}")
            return cls(self._scrub(text), details)
        message = f"the obsctl server at {self.server} answered {said}"
        if 400 <= status < 500:
            return InvalidInput(message, details)
        if status == 500:
            return StorageError(message)
        if status == 507:
            return StorageFull(message)
        return ServiceUnavailable(message, retry_after=wait)

    def _unreachable(self, failure: Failure, tries: int, held_back: str | None) -> ServiceUnavailable:
        message = f"cannot reach the obsctl server at {self.server}: {failure.reason}"
        if held_back:
            message += f" (a {held_back} is not sent again, since the server may have applied it)"
        elif tries > 1:
            message += f" ({tries} tries)"
        return ServiceUnavailable(self._scrub(message))

    def _scrub(self, text: str) -> str:
        """`text` on one line (each control character, line breaks included, becomes a space;
        other spacing is kept, as the same message prints locally), with the API key masked
        should a server echo it, cut to MAX_MESSAGE_CHARS."""
        text = text.translate(_CONTROL_TO_SPACE)
        if self._api_key:
            text = text.replace(self._api_key, "***")
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[: MAX_MESSAGE_CHARS - 3] + "..."
        return text


_CONTROL_TO_SPACE = {c: " " for c in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029)}


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """The wait a `Retry-After` header asks for, in seconds (never negative): a number of
    seconds or an HTTP date. None when the header is absent or unreadable."""
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _check_base_url(base_url: str) -> str:
    """The base URL without a trailing slash; InvalidInput unless it is http(s)://HOST[:PORT][/PREFIX]."""
    text = base_url.strip()
    shown = display_url(text)
    if "://" not in text:
        raise InvalidInput(f"the server URL {shown!r} has no scheme; write it as http://HOST:PORT")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises ValueError on a port that is not a number in range)
    except ValueError:
        raise InvalidInput(f"the server URL {shown!r} cannot be read; write it as http://HOST:PORT") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise InvalidInput(f"the server URL {shown!r} must start with http:// or https://")
    if not parts.hostname:
        raise InvalidInput(f"the server URL {shown!r} names no host")
    if parts.query or parts.fragment:
        raise InvalidInput(f"the server URL {shown!r} must not carry a query or a fragment")
    return text.rstrip("/")


def _check_api_key(api_key: str | None) -> str | None:
    """The key, or None for no key; InvalidInput (never quoting it) if it cannot go in a header."""
    if not api_key:
        return None
    if not all(0x20 < ord(char) < 0x7F for char in api_key):
        raise InvalidInput("the API key must be printable ASCII without spaces; check for a stray newline")
    return api_key


def _error_body(response: requests.Response) -> tuple[str | None, list[dict] | None]:
    """The `error` text and `details` list of an obsctl error body; (None, None) if the body
    is not one."""
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return None, None
    if not isinstance(body, dict) or not isinstance(body.get("error"), str) or not body["error"].strip():
        return None, None
    details = body.get("details")
    if not isinstance(details, list) or not all(isinstance(d, dict) for d in details):
        details = None
    return body["error"], details or None


def _body_kind(response: requests.Response) -> str:
    """What an answer that is not the expected JSON held, for messages: `a text/html body`."""
    if not response.content:
        return "an empty body"
    media_type = response.headers.get("Content-Type", "").split(";")[0].strip()
    return f"a {media_type} body" if media_type else "a body of no stated type"
