"""Failed API-key checks limited per client address, against real `obsctl serve` processes:
HTTP (with and without a body), dashboard logins and OTLP/gRPC count together; the limit is
shared through Redis; X-Forwarded-For names the client only from a trusted proxy."""

from __future__ import annotations

import http.client
import ipaddress
import re

import grpc
import orjson
import pytest
import requests

from obsctl.config import Settings
from obsctl.errors import InvalidInput
from tests.conftest import free_port

KEY = "guess-me-not"
LIMITED = {"SERVICE_API_KEY": KEY, "OBSCTL_AUTH_FAILURE_LIMIT": "3/minute", "OBSCTL_RATE_LIMITS": "off"}
TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def call(server, method: str, path: str, *, key: str | None, source: str = "127.0.0.1",
         body: bytes | None = None, headers: dict | None = None):
    """(status, headers, body) of one request sent from `source` (a loopback address)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10, source_address=(source, 0))
    sent = dict(headers or {})
    if key is not None:
        sent["X-API-Key"] = key
    if body is not None:
        sent["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_wrong_keys_are_limited_per_address_and_the_right_key_elsewhere_is_not(live_server, backend):
    server = live_server(LIMITED)
    # Three failures are allowed (with a body: refused from the headers; without: by the app).
    for key, body in (("nope-1", b"{}"), (None, b"{}"), ("nope-3", None)):
        status, _, answer = call(server, "POST" if body else "GET", "/events" if body else "/sessions",
                                 key=key, body=body)
        assert status == 401, key
    # Then every request of that address that needs the key waits, whatever its key.
    for key, method, path, body in (("nope-4", "GET", "/sessions", None), (KEY, "GET", "/sessions", None),
                                    (KEY, "POST", "/events", b"{}"), ("nope-5", "POST", "/events", b"{}")):
        status, headers, answer = call(server, method, path, key=key, body=body)
        assert status == 429, (key, method)
        assert 1 <= int(headers["Retry-After"]) <= 60
        assert re.fullmatch(r"too many failed API key attempts from this address; retry after \d+ s",
                            orjson.loads(answer)["error"])
    # Another address is not slowed by them: the right key works, a wrong one has its own allowance.
    assert call(server, "GET", "/sessions", key=KEY, source="127.0.0.3")[0] == 200
    assert call(server, "POST", "/events", key=KEY, source="127.0.0.3", body=b"{}")[0] == 400
    assert call(server, "GET", "/sessions", key="nope", source="127.0.0.3")[0] == 401
    # /health needs no key and is never refused for it.
    assert call(server, "GET", "/health", key=None)[0] == 200


@pytest.mark.sqlite_only
def test_dashboard_logins_count_against_the_same_allowance(live_server, backend):
    server = live_server(LIMITED)
    browser = requests.Session()

    def attempt(key: str):
        page = browser.get(f"{server.url}/ui/login", timeout=10).text
        token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        return browser.post(f"{server.url}/ui/login", data={"api_key": key, "csrf_token": token},
                            allow_redirects=False, timeout=10)

    assert [attempt(f"wrong-{i}").status_code for i in range(3)] == [401, 401, 401]
    refused = attempt(KEY)
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    assert "too many failed API key attempts" in refused.text
    assert call(server, "GET", "/sessions", key=KEY)[0] == 429  # the API too, from that address
    assert call(server, "GET", "/sessions", key=KEY, source="127.0.0.3")[0] == 200


@pytest.mark.sqlite_only
def test_grpc_wrong_keys_are_limited_with_a_retry_delay(live_server, backend):
    port = free_port()
    server = live_server(LIMITED, args=("--otlp-grpc-port", str(port)))
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        export = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
        codes = []
        for attempt in range(5):
            try:
                export(b"", metadata=(("x-api-key", f"nope-{attempt}"),), timeout=10)
                codes.append("OK")
            except grpc.RpcError as exc:
                codes.append(exc.code().name)
                last = exc
        assert codes == ["UNAUTHENTICATED"] * 3 + ["RESOURCE_EXHAUSTED"] * 2
        assert "too many failed API key attempts" in last.details()
        details = dict(last.trailing_metadata())["grpc-status-details-bin"]
        assert b"type.googleapis.com/google.rpc.RetryInfo" in details
        with pytest.raises(grpc.RpcError) as right:
            export(b"", metadata=(("x-api-key", KEY),), timeout=10)
        assert right.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # One allowance for HTTP and gRPC together.
    assert call(server, "GET", "/sessions", key=KEY)[0] == 429


@pytest.mark.sqlite_only
def test_the_counts_are_shared_through_redis(live_server, backend, redis_url):
    env = {**LIMITED, "OBSCTL_RATELIMIT_STORAGE_URI": redis_url}
    first, second = live_server(env), live_server(env)
    for n in range(3):
        assert call(first, "GET", "/sessions", key=f"nope-{n}")[0] == 401
    assert call(second, "GET", "/sessions", key=KEY)[0] == 429
    assert call(second, "GET", "/sessions", key=KEY, source="127.0.0.3")[0] == 200


@pytest.mark.sqlite_only
def test_x_forwarded_for_names_the_client_only_from_a_trusted_proxy(live_server, backend):
    server = live_server({**LIMITED, "OBSCTL_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8"})

    def via_proxy(key: str, chain: str, source: str = "127.0.0.1"):
        return call(server, "GET", "/sessions", key=key, source=source, headers={"X-Forwarded-For": chain})[0]

    for n in range(3):
        assert via_proxy(f"nope-{n}", "203.0.113.7") == 401
    assert via_proxy(KEY, "203.0.113.7") == 429
    # The last address not itself a trusted proxy is the client; what the client wrote before it
    # proves nothing.
    assert via_proxy(KEY, "203.0.113.7, 10.1.2.3") == 429
    assert via_proxy(KEY, "203.0.113.7, 198.51.100.2") == 200
    assert via_proxy(KEY, "203.0.113.8") == 200
    assert '203.0.113.7 "GET /sessions" 429' in server.log()
    # From a peer that is not a trusted proxy the header is ignored: no way out of the count.
    for n in range(3):
        assert via_proxy(f"nope-{n}", f"192.0.2.{n}", source="127.0.0.2") == 401
    assert via_proxy(KEY, "192.0.2.99", source="127.0.0.2") == 429


def test_client_address_and_the_settings_read_their_input_strictly():
    from obsctl.config import parse_auth_failure_limit, parse_trusted_proxies
    from obsctl.web.client_address import client_address

    trusted = parse_trusted_proxies("127.0.0.1, 10.0.0.0/8,::1")
    assert trusted == (ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("10.0.0.0/8"),
                       ipaddress.ip_network("::1/128"))
    assert client_address("127.0.0.1", "1.2.3.4", trusted) == "1.2.3.4"
    assert client_address("127.0.0.1", "[2001:db8::1]:443, 10.0.0.9", trusted) == "2001:db8::1"
    assert client_address("127.0.0.1", "garbage, 10.0.0.9", trusted) == "10.0.0.9"
    assert client_address("127.0.0.2", "1.2.3.4", trusted) == "127.0.0.2"
    assert client_address("::ffff:127.0.0.1", "5.6.7.8", trusted) == "5.6.7.8"
    assert client_address("127.0.0.1", None, trusted) == "127.0.0.1"
    with pytest.raises(InvalidInput, match="OBSCTL_TRUSTED_PROXIES: 'nope' is not an IP address"):
        parse_trusted_proxies("10.0.0.1,nope")
    assert parse_auth_failure_limit(None) == "10/minute"
    assert parse_auth_failure_limit("off") is None
    assert parse_auth_failure_limit("5 per hour") == "5 per hour"
    for bad in ("0/minute", "lots", "5/fortnight"):
        with pytest.raises(InvalidInput, match="OBSCTL_AUTH_FAILURE_LIMIT"):
            parse_auth_failure_limit(bad)
    settings = Settings.from_env({"OBSCTL_CONNECTIONS_PER_ADDRESS": "7", "OBSCTL_BODY_TIMEOUT": "3",
                                  "OBSCTL_BODY_MIN_RATE": "50", "OBSCTL_MAX_SPANS": "9",
                                  "OBSCTL_GRPC_MAX_MESSAGE_BYTES": "1000"})
    assert (settings.connections_per_address, settings.body_timeout, settings.body_min_rate,
            settings.max_spans, settings.grpc_max_message_bytes) == (7, 3, 50, 9, 1000)


def test_failures_are_counted_in_memory_while_redis_cannot_be_reached(caplog):
    from obsctl.web.auth_limit import AuthFailures

    failures = AuthFailures("2/minute", f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    assert [failures.check("192.0.2.1", "wrong", KEY).status for _ in range(2)] == [401, 401]
    refused = failures.check("192.0.2.1", KEY, KEY)
    assert refused.status == 429 and 1 <= refused.retry_after <= 60
    assert failures.check("192.0.2.2", KEY, KEY) is None
    assert "counting failed API key checks in memory" in caplog.text
    assert AuthFailures(None).check("192.0.2.1", "wrong", KEY).status == 401  # off: never 429


def test_concurrent_failures_of_one_address_never_pass_the_allowance():
    from concurrent.futures import ThreadPoolExecutor

    from obsctl.web.auth_limit import AuthFailures

    failures = AuthFailures("5/minute")
    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(lambda n: failures.check("192.0.2.7", f"wrong-{n}", KEY).status, range(64)))
    assert statuses.count(401) == 5 and statuses.count(429) == 59
