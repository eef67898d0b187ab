"""Where webhooks may go: one strict parser for saving and sending, refusal of ambiguous URL
forms, addresses hidden in IPv6 transition forms, and connections pinned to the address that
was checked (Host, SNI and certificate name kept), against real receivers on 127.0.0.1."""

from __future__ import annotations

import json
import ssl
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obsctl.errors import InvalidInput
from obsctl.services import webhooks
from obsctl.services.webhooks.delivery import attempt, deliver_due, request_headers
from obsctl.services.webhooks.url_safety import (
    PrivateDestination,
    UnsafeDestination,
    address_problem,
    check_destination,
    parse_webhook_url,
)
from tests.obsctl.webhooks.test_webhooks import fire_one
from tests.webhook_receiver import Receiver

AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
BODY = b'{"type": "webhook.test"}'


def insert_legacy_webhook(db, url: str, allow_private: int = 0) -> str:
    """A webhook row as an older version (or another writer) may have stored it, unchecked."""
    row = {"webhook_id": "wh_legacy", "url": url, "format": "generic", "secret": None,
           "routing_key": None, "rule_ids": "[]", "enabled": 1, "allow_private": allow_private,
           "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z"}
    with db.transaction():
        db.webhooks.insert_webhook(row)
    return row["webhook_id"]


# --- the parser -----------------------------------------------------------------------------

AMBIGUOUS = [
    ("http://169.254.169.254\\@1.1.1.1/latest/meta-data/", "backslash"),
    ("http://127.0.0.1\\@1.1.1.1/", "backslash"),
    ("http://1.1.1.1/a\\b", "backslash"),
    ("http://user:pass@93.184.215.14/", "user info"),
    ("http://93.184.215.14@127.0.0.1/", "user info"),
    ("http://93.184.215.14/a\r\nX-Injected: 1", "control characters"),
    ("http://93.184.215.14/a\x00b", "control characters"),
    ("http://93.184.215.14/a b", "spaces"),
    ("http://93.184.215.14\t/", "control characters"),
    ("http://exämple.com/", "printable ASCII"),
    ("http://93.184.215.14/#frag", "fragment"),
    ("http://localhost./x", "must not end with a dot"),
    ("http://example.com./x", "must not end with a dot"),
    ("http://[fe80::1%25lo]/", "zone id"),
    ("http://[::ffff:169.254.169.254%25lo]/", "zone id"),
    ("http://[v1.fe80::1]/", "invalid IPv6"),
    ("http://[::1/", "malformed [IPv6]"),
    ("http://[::1]x/", "malformed [IPv6]"),
    ("http://0x7f.1/", "ambiguous IPv4"),
    ("http://2130706433/", "ambiguous IPv4"),
    ("http://0177.0.0.1/", "ambiguous IPv4"),
    ("http://127.1/", "ambiguous IPv4"),
    ("http://127.0.0.01/", "ambiguous IPv4"),
    ("http://%31%32%37.0.0.1/", "percent-encode"),
    ("http://a:b:c/", "more than one ':'"),
    ("http://example.com:99999/", "invalid port"),
    ("http://example.com:/", "invalid port"),
    ("http://example.com:+80/", "invalid port"),
    ("http://example.com/%zz", "%XX escape"),
    ("http://exa_mple..com/", "invalid host name"),
    ("http:/example.com/", "must start with http:// or https://"),
    ("file:///etc/passwd", "must start with http:// or https://"),
    ("http:///path", "has no host"),
]


@pytest.mark.parametrize("url, fragment", AMBIGUOUS)
def test_ambiguous_forms_are_refused_even_with_private_allowed(db, private_ok, url, fragment):
    with pytest.raises(InvalidInput) as info:
        webhooks.create_webhook(db, private_ok, {"url": url})
    assert fragment in info.value.message
    assert webhooks.list_webhooks(db)["total"] == 0


def test_plain_forms_parse_into_what_is_sent():
    url = parse_webhook_url("HTTPS://Hooks.Example.COM:8443/a/b%20c?x=1&y=2")
    assert (url.scheme, url.host, url.port, url.target) == ("https", "hooks.example.com", 8443,
                                                           "/a/b%20c?x=1&y=2")
    assert url.host_header == "hooks.example.com:8443" and url.ip is None
    v6 = parse_webhook_url("http://[2606:4700:0::1111]?k=v")
    assert (v6.host, v6.port, v6.target, v6.host_header) == ("2606:4700::1111", 80, "/?k=v",
                                                             "[2606:4700::1111]")
    assert parse_webhook_url("https://93.184.215.14").target == "/"


# --- addresses ------------------------------------------------------------------------------

@pytest.mark.parametrize("address, always", [
    ("2002:a9fe:a9fe::", True),  # 6to4 of 169.254.169.254
    ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
    ("2002:0a00:0001::", False),  # 6to4 of 10.0.0.1
    ("2001:0:5db8:d70e:0:f227:5601:5601", True),  # Teredo, client 169.254.169.254 (obfuscated)
    ("2001:0:5db8:d70e:0:f227:80ff:fffe", False),  # Teredo, client 127.0.0.1 (obfuscated)
    ("64:ff9b::a9fe:a9fe", True),  # NAT64 of 169.254.169.254
    ("64:ff9b::7f00:1", False),  # NAT64 of 127.0.0.1
    ("::ffff:169.254.169.254", True),
    ("0.1.2.3", True),  # "this network": reaches the local host on Linux
    ("fec0::1", False),  # site-local
])
def test_hidden_private_and_metadata_addresses(address, always):
    if always:
        assert address_problem(address, allow_private=True) is not None
    else:
        assert "OBSCTL_WEBHOOK_ALLOW_PRIVATE=1" in address_problem(address, allow_private=False)
        assert address_problem(address, allow_private=True) is None


@pytest.mark.parametrize("address", ["2002:5db8:d70e::", "64:ff9b::5db8:d70e",
                                     "2001:0:5db8:d70e:0:f227:a247:28f1"])
def test_transition_forms_of_public_addresses_pass(address):
    assert address_problem(address, allow_private=False) is None


@pytest.mark.parametrize("url, why", [
    ("http://[2002:7f00:1::]/", "is an IPv6 address carrying 127.0.0.1, a loopback address"),
    ("http://localhost/x", "loopback name"),
    ("http://api.localhost/x", "loopback name"),
    ("http://intranet/x", "single-label name"),
    ("http://printer.local/x", "local-network name"),
    ("http://db.internal/x", "local-network name"),
])
def test_names_and_forms_that_cannot_be_public_are_refused_at_registration(db, settings, url, why):
    with pytest.raises(PrivateDestination) as info:
        webhooks.create_webhook(db, settings, {"url": url})
    assert why in info.value.message and "OBSCTL_WEBHOOK_ALLOW_PRIVATE=1" in info.value.message


def test_metadata_names_and_hidden_metadata_addresses_are_refused_whatever_the_setting(db, private_ok):
    with pytest.raises(UnsafeDestination, match="cloud metadata service"):
        webhooks.create_webhook(db, private_ok, {"url": "http://metadata.google.internal/x"})
    with pytest.raises(UnsafeDestination) as info:
        webhooks.create_webhook(db, private_ok, {"url": "http://[2002:a9fe:a9fe::]/latest/meta-data/"})
    assert info.value.message == ("webhook host 2002:a9fe:a9fe:: is an IPv6 address carrying "
                                  "169.254.169.254, a link-local address (this includes cloud "
                                  "metadata services)")
    assert webhooks.list_webhooks(db)["total"] == 0


def test_every_resolved_address_must_pass():
    def resolver(host, port):
        return ["93.184.215.14", "169.254.169.254"]

    with pytest.raises(UnsafeDestination, match="resolves to 169.254.169.254, a link-local"):
        check_destination("https://hooks.example.com/x", allow_private=True, require_resolution=True,
                          resolver=resolver)


# --- sending: the same parser, pinned connections ------------------------------------------

def test_backslash_bypass_stored_earlier_is_refused_at_send_time(db, settings, receiver):
    # Before: the check read the host as 1.1.1.1 while the HTTP client connected to the
    # part before the backslash: here the loopback receiver, with private addresses off.
    url = f"http://127.0.0.1:{receiver.port}\\@1.1.1.1/hook"
    insert_legacy_webhook(db, url)
    fire_one(db, settings)
    report = deliver_due(db, settings, at=AT)
    assert (report.attempted, report.failed) == (1, 1)
    (delivery,) = webhooks.list_deliveries(db)["deliveries"]
    assert delivery["status"] == "failed"
    assert delivery["last_error"] == "refused: url must not contain a backslash"
    assert receiver.requests == []


def test_user_info_stored_earlier_is_refused_at_send_time(db, private_ok, receiver):
    insert_legacy_webhook(db, f"http://u:p@127.0.0.1:{receiver.port}/hook", allow_private=1)
    fire_one(db, private_ok)
    assert deliver_due(db, private_ok, at=AT).failed == 1
    assert "user info" in webhooks.list_deliveries(db)["deliveries"][0]["last_error"]
    assert receiver.requests == []


def test_connection_goes_to_the_checked_address_with_the_host_name_kept(receiver):
    calls = []

    def resolver(host, port):
        # A rebinding resolver: the first answer passes the check; later ones would not.
        calls.append((host, port))
        return ["127.0.0.1"] if len(calls) == 1 else ["192.0.2.1"]

    url = f"http://hooks.pinned.test:{receiver.port}/hook?x=1"
    headers = request_headers(None, "msg_pinned", BODY)
    result = attempt(url, BODY, headers, allow_private=True, timeout=5, resolver=resolver)
    assert result.ok, result.error
    assert calls == [("hooks.pinned.test", receiver.port)]  # resolved once, used as checked
    (request,) = receiver.requests
    assert request["headers"]["Host"] == f"hooks.pinned.test:{receiver.port}"
    assert request["path"] == "/hook?x=1"


def test_a_name_resolving_to_loopback_waits_for_the_setting(receiver):
    def resolver(host, port):
        return ["127.0.0.1"]

    url = f"http://hooks.pinned.test:{receiver.port}/hook"
    result = attempt(url, BODY, {}, allow_private=False, timeout=5, resolver=resolver)
    assert not result.ok and not result.permanent
    assert result.error.startswith("refused for now: webhook host hooks.pinned.test resolves to "
                                   "127.0.0.1, a loopback address")
    assert receiver.requests == []


def test_redirects_are_not_followed(receiver):
    # An answer 3xx is a failed attempt, whatever its Location says.
    receiver.mode = "ok"
    import http.server

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(302)
            self.send_header("Location", receiver.url)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    import threading

    server = http.server.HTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=server.handle_request, daemon=True)
    thread.start()
    try:
        result = attempt(f"http://127.0.0.1:{server.server_port}/r", BODY, {}, allow_private=True,
                         timeout=5)
    finally:
        thread.join(5)
        server.server_close()
    assert (result.ok, result.status_code) == (False, 302)
    assert "redirects are not followed" in result.error
    assert receiver.requests == []


# --- TLS: SNI and the certificate check use the name, the socket the pinned address -------

# A self-signed certificate for hooks.pinned.test, valid until 2126, kept with the tests so no
# test depends on the openssl program. Made with:
#   openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -keyout hooks.pinned.test.key \
#     -out hooks.pinned.test.pem -subj /CN=hooks.pinned.test -addext subjectAltName=DNS:hooks.pinned.test
TLS_DIR = Path(__file__).resolve().parents[2] / "data" / "tls"


@pytest.fixture(scope="module")
def certificate():
    return TLS_DIR / "hooks.pinned.test.pem", TLS_DIR / "hooks.pinned.test.key"


@pytest.fixture
def tls_receiver(certificate):
    cert, key = certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    names = []
    context.sni_callback = lambda sock, name, ctx: names.append(name)
    receiver = Receiver(tls=context).start()
    receiver.sni = names
    yield receiver
    receiver.stop()


def test_https_is_pinned_and_checks_the_certificate_of_the_name(tls_receiver, certificate):
    client = ssl.create_default_context(cafile=str(certificate[0]))

    def resolver(host, port):
        return ["127.0.0.1"]

    good = attempt(f"https://hooks.pinned.test:{tls_receiver.port}/hook", BODY, {},
                   allow_private=True, timeout=5, resolver=resolver, ssl_context=client)
    assert good.ok, good.error
    assert tls_receiver.sni == ["hooks.pinned.test"]
    assert tls_receiver.requests[0]["headers"]["Host"] == f"hooks.pinned.test:{tls_receiver.port}"

    wrong = attempt(f"https://other.pinned.test:{tls_receiver.port}/hook", BODY, {},
                    allow_private=True, timeout=5, resolver=resolver, ssl_context=client)
    assert not wrong.ok and wrong.error.startswith("TLS certificate check failed")
    assert "other.pinned.test" in wrong.error
    assert len(tls_receiver.requests) == 1


def test_api_refuses_the_reported_bypass(client):
    response = client.post("/webhooks", json={"url": "http://169.254.169.254\\@1.1.1.1/latest/meta-data/"})
    assert response.status_code == 400
    assert response.get_json() == {"error": "url must not contain a backslash"}
    assert json.loads(client.get("/webhooks").data)["total"] == 0
