"""Where webhooks may be sent (SSRF rules of DECISIONS).

One strict parser (`parse_webhook_url`) reads a webhook URL, both when it is saved and when
it is sent, and the sender builds its connection from that parse alone, so the host that was
checked is the host that is contacted. Forms that other parsers read differently are refused
rather than interpreted: backslashes, user info (`user:pass@`), spaces, control characters
(CR, LF, NUL, ...) and non-ASCII characters, fragments, IPv6 zone ids, percent-encoded or
numeric-but-not-dotted-quad hosts (`0x7f.1`, `2130706433`), trailing dots and bad escapes.

Addresses: link-local and cloud metadata addresses (and unspecified, "this network",
multicast and reserved ones) are always refused; loopback and private addresses only pass
when private destinations are allowed. IPv6 forms that carry an IPv4 address (mapped, 6to4,
Teredo, NAT64) are judged by that IPv4 address too. Names that can only be local
(`localhost`, `*.localhost`, single-label names, `*.local`, `*.internal`, `*.home.arpa`) count
as private without asking DNS.

At send time the host is resolved once, every address is checked, and the connection goes to
a checked address (see webhook_http): DNS cannot answer differently between check and use.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from typing import NoReturn

from obsctl.errors import InvalidInput
from obsctl.models.webhooks import MAX_URL_LEN

DEFAULT_PORTS = {"http": 80, "https": 443}
# Metadata services outside the link-local range (Alibaba Cloud, Azure wireserver, AWS IPv6).
_METADATA = frozenset(ipaddress.ip_address(a) for a in
                      ("100.100.100.200", "168.63.129.16", "fd00:ec2::254"))
_METADATA_NAMES = frozenset({"metadata", "metadata.google.internal", "instance-data",
                             "instance-data.ec2.internal"})
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: private in practice
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # 0.x.x.x reaches the local host on Linux
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_LOCAL_SUFFIXES = (".local", ".internal", ".home.arpa")
_ALLOW_HINT = "set OBSCTL_WEBHOOK_ALLOW_PRIVATE=1 to allow"

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMERIC_LABEL = re.compile(r"(0x[0-9a-f]*|[0-9]+)")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PORT = re.compile(r"[0-9]{1,5}")

# How long saving a webhook waits for DNS before accepting the host for a later check.
REGISTRATION_DNS_TIMEOUT_S = 5.0
# Lookups one save (a configuration document) makes at the same time.
_PARALLEL_LOOKUPS = 16

Resolver = Callable[[str, int], list[str]]


class UnsafeDestination(InvalidInput):
    """The URL points somewhere webhooks may not go (a permanent refusal)."""


class PrivateDestination(UnsafeDestination):
    """The host is or resolves to a loopback or private address, and those are not allowed.

    Permanent when a webhook is saved; at send time the delivery stays pending (DNS answers
    and settings can change), until it gives up after 24 hours."""


class UnresolvableHost(Exception):
    """The host name does not resolve right now (may be transient)."""


@dataclass(frozen=True)
class WebhookUrl:
    """A parsed webhook URL: everything the sender needs to connect and to ask."""

    scheme: str  # http or https
    host: str  # a lower-case DNS name, or an IP address (without brackets)
    port: int
    target: str  # the request target: path and query, at least "/"
    ip: IPv4Address | IPv6Address | None  # when the host is an IP address literal

    @property
    def host_header(self) -> str:
        """The Host header (and what TLS certificates are checked against, without port)."""
        host = f"[{self.host}]" if isinstance(self.ip, IPv6Address) else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


def _refuse(message: str) -> NoReturn:
    raise InvalidInput(f"url {message}")


def parse_webhook_url(url) -> WebhookUrl:
    """Parse a webhook URL strictly (InvalidInput on any form that is not plain and unique)."""
    if type(url) is not str or not url.strip():
        raise InvalidInput("url must be a non-empty string")
    if len(url) > MAX_URL_LEN:
        raise InvalidInput(f"url must be at most {MAX_URL_LEN} characters")
    if any(not 0x21 <= ord(ch) <= 0x7E for ch in url):
        _refuse("must be printable ASCII without spaces or control characters "
                "(percent-encode them; use the xn-- form of international names)")
    if "\\" in url:
        _refuse("must not contain a backslash")
    match = _SCHEME.match(url)
    if not match or match.group(1).lower() not in DEFAULT_PORTS:
        _refuse(f"must start with http:// or https://; got {url[:80]!r}")
    scheme = match.group(1).lower()
    rest = url[match.end():]
    if "#" in rest:
        _refuse("must not contain a fragment (#...): it is never sent")
    split = re.search(r"[/?]", rest)
    authority, target = (rest[:split.start()], rest[split.start():]) if split else (rest, "")
    if "@" in authority:
        _refuse("must not contain user info (user:password@); sign deliveries with a secret instead")
    host, ip, port_text = _split_authority(authority)
    port = DEFAULT_PORTS[scheme]
    if port_text is not None:
        if not _PORT.fullmatch(port_text) or not 1 <= int(port_text) <= 65535:
            _refuse(f"has an invalid port {port_text!r}: it must be a number from 1 to 65535")
        port = int(port_text)
    if _BAD_ESCAPE.search(target):
        _refuse("has a % that does not start a %XX escape")
    if target.startswith("?") or not target:
        target = "/" + target
    return WebhookUrl(scheme, host, port, target, ip)


def _split_authority(authority: str) -> tuple[str, IPv4Address | IPv6Address | None, str | None]:
    """(host, ip literal or None, port text or None) of `host[:port]` or `[v6][:port]`."""
    ip: IPv4Address | IPv6Address | None
    if authority.startswith("["):
        inside, bracket, after = authority[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            _refuse("has a malformed [IPv6] host")
        if "%" in inside:
            _refuse("must not contain an IPv6 zone id (%25...)")
        try:
            ip = IPv6Address(inside)
        except ValueError:
            _refuse(f"has an invalid IPv6 address [{inside}]")
        return str(ip), ip, after[1:] if after else None
    host, colon, port_text = authority.partition(":")
    if ":" in port_text:
        _refuse("has more than one ':' in its host (write IPv6 addresses in brackets)")
    if not host:
        _refuse("has no host")
    host = host.lower()
    if "%" in host:
        _refuse("must not percent-encode its host")
    if host.endswith("."):
        _refuse("host must not end with a dot")
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        _refuse(f"has an invalid host name {host[:80]!r}")
    ip = None
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        # URL parsers and inet_aton read such hosts as IPv4 in several notations
        # (0x7f.1, 017700000001, 127.1): only the plain dotted quad is unambiguous.
        try:
            ip = IPv4Address(host)
        except ValueError:
            _refuse(f"host {host!r} is an ambiguous IPv4 form; write four decimal numbers a.b.c.d")
        host = str(ip)
    return host, ip, port_text if colon else None


def _verdict(ip: IPv4Address | IPv6Address) -> tuple[bool, str] | None:
    """(always_refused, why) for an address taken by itself, or None when it is public."""
    if ip in _METADATA:
        return True, "a cloud metadata address"
    if ip.is_link_local:
        return True, "a link-local address (this includes cloud metadata services)"
    if ip.is_unspecified or ip.is_multicast or ip in _THIS_NETWORK:
        return True, "an unspecified, 'this network' or multicast address"
    if ip.is_loopback:  # before is_reserved, which covers ::1
        return False, "a loopback address"
    if isinstance(ip, IPv6Address) and ip.is_site_local:
        return False, "a site-local address"
    if ip.is_reserved:
        return True, "a reserved address"
    if ip.is_private or ip in _SHARED:
        return False, "a private address"
    return None


def _embedded_ipv4(ip: IPv6Address) -> list[IPv4Address] | None:
    """The IPv4 addresses an IPv6 transition form carries (None when it is not one)."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)  # (server, client)
    if any(ip in net for net in _NAT64):
        return [IPv4Address(int(ip) & 0xFFFFFFFF)]
    return None


def classify_address(address: str | IPv4Address | IPv6Address) -> tuple[bool, str] | None:
    """(always_refused, why) for an address webhooks may not reach, or None when public.

    Transition forms are judged by the IPv4 addresses they carry (the worst one wins)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0]) if isinstance(address, str) else address
    if isinstance(ip, IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            verdicts = [(v4, v) for v4, v in ((v4, _verdict(v4)) for v4 in embedded) if v]
            if not verdicts:
                return None
            v4, (forbidden, why) = max(verdicts, key=lambda item: item[1][0])
            return forbidden, f"an IPv6 address carrying {v4}, {why}"
    return _verdict(ip)


def address_problem(address: str, *, allow_private: bool) -> str | None:
    """Why webhooks may not go to this IP address, or None when they may."""
    verdict = classify_address(address)
    if verdict is None:
        return None
    forbidden, why = verdict
    if forbidden:
        return why
    return None if allow_private else f"{why} ({_ALLOW_HINT})"


def _name_verdict(host: str) -> tuple[bool, str] | None:
    """What a host name is known to be without DNS: metadata, loopback, or local-only."""
    if host in _METADATA_NAMES:
        return True, "a cloud metadata service"
    if host == "localhost" or host.endswith(".localhost"):
        return False, "a loopback name"
    if "." not in host:
        return False, "a single-label name (resolved through local search domains)"
    if host.endswith(_LOCAL_SUFFIXES):
        return False, "a local-network name"
    return None


def _raise(host: str, detail: str, forbidden: bool, allow_private: bool) -> None:
    if forbidden:
        raise UnsafeDestination(f"webhook host {host} {detail}")
    if not allow_private:
        raise PrivateDestination(f"webhook host {host} {detail} ({_ALLOW_HINT})")


def system_resolve(host: str, port: int) -> list[str]:
    """Every address of `host`, in the order the system resolver gives them."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise UnresolvableHost(f"cannot resolve {host}: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def resolve_within(host: str, port: int, seconds: float, resolver: Resolver | None = None) -> list[str]:
    """`resolver(host, port)` (default: the system's) given at most `seconds` to answer.

    getaddrinfo has no timeout of its own: it runs in a helper thread, left to finish alone
    when it takes too long."""
    resolver = resolver or system_resolve
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["addresses"] = resolver(host, port)
        except UnresolvableHost as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="obsctl-webhook-dns", daemon=True)
    thread.start()
    thread.join(max(0.0, seconds))
    if thread.is_alive():
        raise UnresolvableHost(f"cannot resolve {host}: no answer within {seconds:g} s")
    if "error" in outcome:
        raise outcome["error"]
    if not outcome.get("addresses"):
        raise UnresolvableHost(f"cannot resolve {host}: no addresses")
    return outcome["addresses"]


def check_destination(url, *, allow_private: bool, require_resolution: bool,
                      resolver: Resolver | None = None,
                      dns_timeout: float = REGISTRATION_DNS_TIMEOUT_S) -> tuple[WebhookUrl, list[str]]:
    """Parse `url` and check where it leads; returns (the parse, the checked addresses).

    Raises InvalidInput for a malformed URL, UnsafeDestination (PrivateDestination for a
    private one) for a refused destination. Every resolved address must pass. With
    `require_resolution` false (saving a webhook) a name that does not resolve now is accepted
    with no addresses, since it is checked again before each delivery; with it true
    (delivering) the UnresolvableHost error propagates. `dns_timeout` 0 (saving, when the
    time for lookups has run out) accepts a name without asking DNS.

    This may wait seconds for DNS: never call it inside a transaction.
    """
    parsed = parse_webhook_url(url)
    if parsed.ip is not None:
        verdict = classify_address(parsed.ip)
        if verdict:
            _raise(parsed.host, f"is {verdict[1]}", verdict[0], allow_private)
        return parsed, [parsed.host]
    verdict = _name_verdict(parsed.host)
    if verdict:
        _raise(parsed.host, f"is {verdict[1]}", verdict[0], allow_private)
    if dns_timeout <= 0 and not require_resolution:
        return parsed, []
    try:
        addresses = resolve_within(parsed.host, parsed.port, dns_timeout, resolver)
    except UnresolvableHost:
        if require_resolution:
            raise
        return parsed, []
    verdicts = [(address, classify_address(address)) for address in addresses]
    refused = [(address, v) for address, v in verdicts if v]
    if refused:
        address, (forbidden, why) = max(refused, key=lambda item: item[1][0])
        _raise(parsed.host, f"resolves to {address}, {why}", forbidden, allow_private)
    return parsed, addresses


def check_destinations(urls, *, allow_private: bool, resolver: Resolver | None = None,
                       seconds: float = REGISTRATION_DNS_TIMEOUT_S) -> dict[str, InvalidInput | None]:
    """Check where each of `urls` (strings) leads, as saving a webhook does: {url: the error
    refusing it, or None}.

    The lookups run side by side and share one deadline of `seconds`: a name whose answer has
    not come by then is accepted (it is checked again before each delivery), so checking a
    document of many webhooks takes `seconds` at most, however slow its names are.
    """
    distinct = list(dict.fromkeys(urls))
    deadline = time.monotonic() + seconds

    def check(url: str) -> InvalidInput | None:
        try:
            check_destination(url, allow_private=allow_private, require_resolution=False,
                              resolver=resolver, dns_timeout=max(0.0, deadline - time.monotonic()))
        except InvalidInput as exc:
            return exc
        return None

    if len(distinct) <= 1:
        return {url: check(url) for url in distinct}
    with ThreadPoolExecutor(max_workers=min(_PARALLEL_LOOKUPS, len(distinct)),
                            thread_name_prefix="obsctl-webhook-check") as pool:
        return dict(zip(distinct, pool.map(check, distinct), strict=True))
