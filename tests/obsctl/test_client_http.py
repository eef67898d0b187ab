"""The remote-mode HTTP client against real HTTP servers on 127.0.0.1.

Each server runs in a thread and answers from a script: one answer per request in order, the
last one repeated. Besides ordinary answers it can reset the connection, cut an answer short,
or answer too late. The client's `sleep` records its waits instead of sleeping, so retries
cost no time.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
import pytest
import typer

from obsctl import __version__
from obsctl.cli.base import EXIT_FAILURE, translate_errors
from obsctl.client.http import Client, retry_after_seconds
from obsctl.client.paths import api_path
from obsctl.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    QueryTimeout,
    ServiceUnavailable,
    StorageError,
    StorageFull,
    Unauthorized,
)

KEY = "k-secret-4711"
OK = (200, {}, {"ok": True})
# How long a "slow" answer takes, and the client timeout that it exceeds.
SLOW_SECONDS = 3.0
TIMEOUT = 0.2


class ScriptedServer:
    """A ThreadingHTTPServer answering each request with the next entry of `script`: a
    (status, headers, body) tuple (body: dict/list as JSON, bytes as is, None for none), or
    "reset" (RST, no answer), "cut" (headers and half the promised body, then close) or
    "slow" (answers only after SLOW_SECONDS). Every request is recorded in `seen`."""

    def __init__(self, script: tuple):
        self.script = script
        self.seen: list[dict] = []
        self.release = threading.Event()  # set at stop: slow answers end at once
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._httpd.handle_error = lambda request, address: None  # the client hung up: expected
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, record: dict):
        with self._lock:
            self.seen.append(record)
            return self.script[min(len(self.seen), len(self.script)) - 1]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answer = server._next({"method": self.command, "path": self.path,
                                       "headers": dict(self.headers.items()), "body": body})
                if answer == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                if answer == "cut":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: 100\r\n\r\n{\"ok\": tr")
                    self.close_connection = True
                    return
                if answer == "slow":
                    server.release.wait(SLOW_SECONDS)
                    answer = OK
                status, headers, payload = answer
                data = payload if isinstance(payload, bytes) else b"" if payload is None else orjson.dumps(payload)
                self.send_response(status)
                headers = {"Content-Type": "application/json", **headers} if data else headers
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

        return Handler


@pytest.fixture
def serve() -> Iterator:
    servers: list[ScriptedServer] = []

    def start(*script) -> ScriptedServer:
        servers.append(ScriptedServer(script))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def client(waits) -> Iterator:
    """client(url, **options) -> a Client whose waits are recorded in `waits`."""
    clients: list[Client] = []

    def make(url: str, **options) -> Client:
        options.setdefault("sleep", waits.append)
        clients.append(Client(url, **options))
        return clients[-1]

    yield make
    for made in clients:
        made.close()


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A port that refuses connections: bound, so nothing else takes it, but not listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def assert_one_line(message: str) -> None:
    assert "\n" not in message and "Traceback" not in message and "HTTPConnectionPool" not in message
    assert KEY not in message


# -- answers ------------------------------------------------------------------------------------------


def test_json_helpers_send_the_key_and_decode_the_answer(serve, client):
    server = serve((200, {}, {"sessions": [], "total": 0}), (201, {}, {"id": 1}), (200, {}, {"id": 1}),
                   (204, {}, None))
    remote = client(server.url, api_key=KEY)
    assert remote.get_json("/sessions", params={"limit": 5}) == {"sessions": [], "total": 0}
    assert remote.post_json("/alerts/rules", {"name": "r", "when": datetime(2026, 1, 1, tzinfo=UTC)}) == {"id": 1}
    assert remote.put_json("/alerts/rules/1", {"name": "r2"}) == {"id": 1}
    assert remote.delete("/alerts/rules/1") is None
    assert [(r["method"], r["path"]) for r in server.seen] == [
        ("GET", "/sessions?limit=5"), ("POST", "/alerts/rules"), ("PUT", "/alerts/rules/1"),
        ("DELETE", "/alerts/rules/1")]
    for record in server.seen:
        assert record["headers"]["X-API-Key"] == KEY
        assert record["headers"]["User-Agent"] == f"obsctl/{__version__}"
    assert server.seen[1]["headers"]["Content-Type"] == "application/json"
    assert orjson.loads(server.seen[1]["body"]) == {"name": "r", "when": "2026-01-01T00:00:00+00:00"}


def test_no_key_no_header(serve, client):
    server = serve(OK)
    client(server.url).get_json("/health")
    assert "X-API-Key" not in server.seen[0]["headers"]


def test_a_path_prefix_in_the_base_url_is_kept(serve, client):
    server = serve(OK)
    remote = client(server.url + "/obsctl/")
    remote.get_json("/sessions")
    remote.get_json("sessions/x")
    remote.get_json(api_path("/sessions/{}/explain", "a/b c", absent="-"))
    assert [r["path"] for r in server.seen] == ["/obsctl/sessions", "/obsctl/sessions/x",
                                                "/obsctl/sessions/a%2Fb%20c/explain"]


@pytest.mark.parametrize(("sid", "path"), [
    ("team/run-1", "/triage/team%2Frun-1"),
    ("50% off", "/triage/50%25%20off"),
    (".", "/triage/%2E"),
    ("..", "/triage/%2E."),
    ("batch", "/triage/%62atch"),      # /triage/batch is the batch route
    ("candidates", "/triage/%63andidates"),
    ("batches", "/triage/batches"),
    ("é", "/triage/%C3%A9"),
])
def test_an_id_is_always_one_segment_naming_itself(sid, path):
    assert api_path("/triage/{}", sid, absent="-") == path


def test_an_empty_id_is_not_asked_for(serve, client):
    server = serve(OK)
    with pytest.raises(NotFound) as info:
        client(server.url).get_json(api_path("/sessions/{}", "", absent="session '' not found"))
    assert info.value.message == "session '' not found" and server.seen == []


@pytest.mark.parametrize(("status", "error"), [
    (400, InvalidInput), (422, InvalidInput), (404, NotFound), (409, Conflict), (413, PayloadTooLarge),
    (504, QueryTimeout)])
def test_client_errors_carry_the_servers_message_unchanged(serve, client, waits, status, error):
    details = [{"index": 0, "field": "timestamp", "message": "not a date"}]
    server = serve((status, {}, {"error": "session 'x' is not what you asked", "details": details}))
    with pytest.raises(error) as info:
        client(server.url, api_key=KEY).get_json("/sessions/x")
    assert type(info.value) is error
    assert info.value.message == "session 'x' is not what you asked"
    assert info.value.details == details
    # A 4xx is an answer, not a failure, and a 504 a search stopped after working as long as
    # it may: neither is retried.
    assert len(server.seen) == 1 and waits == []


def test_an_error_without_an_obsctl_body_names_the_status(serve, client):
    server = serve((404, {"Content-Type": "text/html"}, b"<html>nginx</html>"))
    with pytest.raises(NotFound) as info:
        client(server.url).get_json("/sessions/x")
    assert info.value.message == (f"the obsctl server at {server.url} answered HTTP 404 with a text/html body, "
                                  f"not an obsctl error")


@pytest.mark.parametrize(("status", "error"), [(500, StorageError), (507, StorageFull), (502, ServiceUnavailable)])
def test_server_errors_name_the_server_and_are_not_retried(serve, client, waits, status, error):
    server = serve((status, {}, {"error": "internal server error"}))
    with pytest.raises(error) as info:
        client(server.url).get_json("/sessions")
    assert type(info.value) is error
    assert info.value.message == f"the obsctl server at {server.url} answered HTTP {status}: internal server error"
    assert len(server.seen) == 1 and waits == []


def test_a_2xx_answer_that_is_not_json_names_the_status(serve, client):
    server = serve((200, {"Content-Type": "text/html"}, b"<html>login page</html>"))
    with pytest.raises(ServiceUnavailable) as info:
        client(server.url).get_json("/sessions")
    assert info.value.message == (f"the obsctl server at {server.url} answered HTTP 200 with a text/html body, "
                                  f"not JSON; is that the URL of an obsctl server?")
    # `request` hands any 2xx body over as it is.
    assert client(server.url).request("GET", "/export").content == b"<html>login page</html>"


def test_redirects_are_not_followed(serve, client):
    server = serve((302, {"Location": "http://u:pw@elsewhere.example/obsctl"}, None))
    with pytest.raises(InvalidInput) as info:
        client(server.url, api_key=KEY).get_json("/sessions")
    assert info.value.message == (f"the obsctl server at {server.url} redirects to "
                                  f"http://u:***@elsewhere.example/obsctl (HTTP 302); use that URL instead")
    assert len(server.seen) == 1


# -- the API key --------------------------------------------------------------------------------------


def test_401_without_a_key_says_one_is_needed(serve, client):
    server = serve((401, {}, {"error": "missing API key: send it in the X-API-Key header"}))
    with pytest.raises(Unauthorized) as info:
        client(server.url).get_json("/sessions")
    assert info.value.message == (f"the obsctl server at {server.url} needs an API key, and none was given "
                                  f"(HTTP 401: missing API key: send it in the X-API-Key header)")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_never_appears_in_the_message(serve, client, status):
    server = serve((status, {}, {"error": f"invalid API key {KEY}\nTraceback: nope"}))
    with pytest.raises(Unauthorized) as info:
        client(server.url, api_key=KEY).get_json("/sessions")
    assert info.value.message == (f"the obsctl server at {server.url} refused the API key "
                                  f"(HTTP {status}: invalid API key *** Traceback: nope)")
    assert KEY not in repr(client(server.url, api_key=KEY))


def test_a_key_that_cannot_be_a_header_is_refused_without_quoting_it():
    with pytest.raises(InvalidInput) as info:
        Client("http://127.0.0.1:1", api_key=KEY + "\n")
    assert KEY not in info.value.message


# -- retries on 429 and 503 ---------------------------------------------------------------------------


def test_429_waits_the_retry_after_then_succeeds(serve, client, waits):
    server = serve((429, {"Retry-After": "1"}, {"error": "rate limit exceeded"}), OK)
    assert client(server.url).post_json("/events", {"events": []}) == {"ok": True}
    assert waits == [1.0]
    assert [r["method"] for r in server.seen] == ["POST", "POST"]


def test_retry_after_as_an_http_date(serve, client, waits):
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    server = serve((429, {"Retry-After": later}, {"error": "slow down"}), OK)
    client(server.url).get_json("/sessions")
    assert len(waits) == 1 and 8 <= waits[0] <= 10


def test_retry_after_is_capped_at_max_wait(serve, client, waits):
    server = serve((503, {"Retry-After": "120"}, {"error": "busy"}), OK)
    client(server.url, max_wait=5).get_json("/sessions")
    assert waits == [5.0]


def test_429_after_the_last_try_is_service_unavailable(serve, client, waits):
    server = serve((429, {"Retry-After": "7"}, {"error": "rate limit exceeded"}))
    with pytest.raises(ServiceUnavailable) as info:
        client(server.url, retries=2).get_json("/sessions")
    assert info.value.message == f"rate limited by {server.url}; retry after 7 s"
    assert info.value.retry_after == 7
    assert waits == [7.0, 7.0] and len(server.seen) == 3


def test_503_twice_then_200_backs_off_exponentially_with_jitter(serve, client, waits):
    server = serve((503, {}, {"error": "database busy"}), (503, {}, {"error": "database busy"}), OK)
    assert client(server.url).post_json("/events", {"events": []}) == {"ok": True}
    assert len(server.seen) == 3
    assert len(waits) == 2 and 0.5 <= waits[0] <= 0.75 and 1.0 <= waits[1] <= 1.5


def test_503_after_the_last_try_carries_the_servers_message(serve, client, waits):
    server = serve((503, {"Retry-After": "2"}, {"error": "the database is busy; retry"}))
    with pytest.raises(ServiceUnavailable) as info:
        client(server.url, retries=1).get_json("/sessions")
    assert info.value.message == f"the obsctl server at {server.url} answered HTTP 503: the database is busy; retry"
    assert info.value.retry_after == 2 and waits == [2.0]


def test_backoff_doubles_and_adds_up_to_half_again_at_random(serve, client, waits):
    server = serve((503, {}, {"error": "busy"}))
    with pytest.raises(ServiceUnavailable):
        client(server.url, retries=6, backoff=0.5, max_wait=100).get_json("/sessions")
    bases = [0.5 * 2**attempt for attempt in range(6)]
    assert len(waits) == 6 and all(base <= wait <= 1.5 * base for base, wait in zip(bases, waits))
    assert waits != bases  # jittered: retrying clients do not come back in step


def test_backoff_is_capped_at_max_wait(serve, client, waits):
    server = serve((503, {}, {"error": "busy"}))
    with pytest.raises(ServiceUnavailable):
        client(server.url, retries=3, backoff=10, max_wait=3).get_json("/sessions")
    assert waits == [3.0, 3.0, 3.0]


def test_no_retries_means_one_try(serve, client, waits):
    server = serve((503, {}, {"error": "busy"}), OK)
    with pytest.raises(ServiceUnavailable):
        client(server.url, retries=0).get_json("/sessions")
    assert len(server.seen) == 1 and waits == []


# -- connection failures ------------------------------------------------------------------------------


def test_refused_is_one_line_naming_the_url_without_secrets(client, waits, refused_port):
    url = f"http://user:secret@127.0.0.1:{refused_port}/obsctl"
    with pytest.raises(ServiceUnavailable) as info:
        client(url, api_key=KEY, retries=2).post_json("/events", {"events": []})
    assert info.value.message == (f"cannot reach the obsctl server at http://user:***@127.0.0.1:{refused_port}"
                                  f"/obsctl: connection refused (3 tries)")
    assert "secret" not in info.value.message
    assert_one_line(info.value.message)
    # Nothing was sent, so even a POST is tried again.
    assert len(waits) == 2 and 0.5 <= waits[0] <= 0.75 and 1.0 <= waits[1] <= 1.5


def test_the_cli_reports_a_remote_failure_as_one_line_and_exit_1(serve, client, refused_port, capsys):
    server = serve((401, {}, {"error": "invalid API key"}))

    @translate_errors
    def command(url: str) -> None:
        client(url, api_key=KEY, retries=0).get_json("/sessions")

    for url, message in [
        (f"http://127.0.0.1:{refused_port}", "connection refused"),
        (server.url, "refused the API key (HTTP 401: invalid API key)"),
    ]:
        with pytest.raises(typer.Exit) as info:
            command(url)
        assert info.value.exit_code == EXIT_FAILURE
        err = capsys.readouterr().err
        assert err.startswith("Error: ") and err.count("\n") == 1 and err.endswith(f"{message}\n"), err
        assert KEY not in err


@pytest.mark.parametrize("failure", ["reset", "cut"])
def test_a_broken_connection_is_retried_for_a_get(serve, client, waits, failure):
    server = serve(failure, OK)
    assert client(server.url, api_key=KEY).get_json("/sessions") == {"ok": True}
    assert len(server.seen) == 2 and len(waits) == 1


@pytest.mark.parametrize(("failure", "reason"), [
    ("reset", "connection reset by the server"), ("cut", "the answer was cut off")])
def test_a_broken_connection_is_not_retried_for_a_post(serve, client, waits, failure, reason):
    server = serve(failure, OK)
    with pytest.raises(ServiceUnavailable) as info:
        client(server.url, api_key=KEY).post_json("/events", {"events": []})
    assert info.value.message == (f"cannot reach the obsctl server at {server.url}: {reason} "
                                  f"(a POST is not sent again, since the server may have applied it)")
    assert len(server.seen) == 1 and waits == []
    assert client(server.url).post_json("/events", {"events": []}, idempotent=True) == {"ok": True}


def test_a_slow_get_times_out_and_is_retried(serve, client, waits):
    server = serve("slow")
    started = time.monotonic()
    with pytest.raises(ServiceUnavailable) as info:
        client(server.url, api_key=KEY, timeout=TIMEOUT, retries=1).get_json("/sessions")
    assert time.monotonic() - started < SLOW_SECONDS
    assert info.value.message == f"cannot reach the obsctl server at {server.url}: no answer within 0.2 s (2 tries)"
    assert len(server.seen) == 2 and len(waits) == 1


def test_a_slow_post_is_not_retried_unless_idempotent(serve, client, waits):
    server = serve("slow")
    with pytest.raises(ServiceUnavailable, match=r"no answer within 0\.2 s \(a POST is not sent again"):
        client(server.url, timeout=TIMEOUT, retries=2).post_json("/events", {"events": []})
    assert len(server.seen) == 1 and waits == []
    with pytest.raises(ServiceUnavailable, match=r"no answer within 0\.2 s \(3 tries\)$"):
        client(server.url, timeout=TIMEOUT, retries=2).post_json("/events", {"events": []}, idempotent=True)
    assert len(server.seen) == 4 and len(waits) == 2


# -- the base URL and Retry-After ---------------------------------------------------------------------


@pytest.mark.parametrize(("url", "complaint"), [
    ("localhost:3000", "has no scheme"),
    ("127.0.0.1", "has no scheme"),
    ("ftp://host/obsctl", "must start with http:// or https://"),
    ("http://", "names no host"),
    ("http://host:99999", "cannot be read"),
    ("http://host/obsctl?x=1", "must not carry a query"),
])
def test_a_bad_base_url_is_invalid_input(url, complaint):
    with pytest.raises(InvalidInput, match=complaint):
        Client(url)


def test_a_bad_base_url_message_masks_the_password():
    with pytest.raises(InvalidInput) as info:
        Client("ftp://user:secret@host")
    assert info.value.message == "the server URL 'ftp://user:***@host' must start with http:// or https://"


def test_https_and_trailing_slashes_are_accepted():
    assert Client("HTTPS://example.com:8443/obsctl//").url("/sessions") == "HTTPS://example.com:8443/obsctl/sessions"


def test_retry_after_values():
    now = datetime(2026, 4, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("3", now) == 3.0
    assert retry_after_seconds(" 0 ", now) == 0.0
    assert retry_after_seconds("Wed, 01 Apr 2026 12:00:30 GMT", now) == 30.0
    assert retry_after_seconds("Wed, 01 Apr 2026 11:00:00 GMT", now) == 0.0  # in the past: now
    for unreadable in (None, "", "soon", "nan", "inf"):
        assert retry_after_seconds(unreadable, now) is None
    assert retry_after_seconds("-5", now) == 0.0


def test_a_servers_message_keeps_its_spacing_on_one_line(serve, client):
    """The same text as locally (`session 'a  b' not found`), but never a second line."""
    server = serve((404, {}, {"error": "session 'a  b' not found\nsecond\r\x1b[31mline"}))
    with pytest.raises(NotFound) as info:
        client(server.url).get_json("/sessions/x")
    assert info.value.message == "session 'a  b' not found second  [31mline"
