"""Where webhooks may be sent (SSRF rules of DECISIONS).

A webhook URL is http or https with a host. Every address the host resolves to is checked:
link-local and cloud metadata addresses (and unspecified, multicast, reserved ones) are always
refused; loopback and private addresses only pass when `OBSCTL_WEBHOOK_ALLOW_PRIVATE=1`.
The check runs when a webhook is saved and again right before each delivery, because DNS
answers can change in between.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from obsctl.errors import InvalidInput

MAX_URL_LEN = 2048
# Metadata services outside the link-local range (Alibaba Cloud, Azure wireserver, AWS IPv6).
_METADATA = frozenset(ipaddress.ip_address(a) for a in
                      ("100.100.100.200", "168.63.129.16", "fd00:ec2::254"))
_METADATA_NAMES = frozenset({"metadata", "metadata.google.internal", "instance-data",
                             "instance-data.ec2.internal"})
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: private in practice


class UnsafeDestination(InvalidInput):
    """The URL points somewhere webhooks may not go (a permanent refusal)."""


class UnresolvableHost(Exception):
    """The host name does not resolve right now (may be transient)."""


def parse_webhook_url(url) -> tuple[str, str]:
    """Check the shape of a webhook URL; returns (scheme, host)."""
    if type(url) is not str or not url.strip():
        raise InvalidInput("url must be a non-empty string")
    if len(url) > MAX_URL_LEN:
        raise InvalidInput(f"url must be at most {MAX_URL_LEN} characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise InvalidInput(f"url is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise InvalidInput(f"url must start with http:// or https://; got {url[:80]!r}")
    if not host:
        raise InvalidInput(f"url has no host: {url[:80]!r}")
    return parts.scheme, host


def address_problem(address: str, *, allow_private: bool) -> str | None:
    """Why webhooks may not go to this IP address, or None when they may."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in _METADATA:
        return "a cloud metadata address"
    if ip.is_link_local:
        return "a link-local address (this includes cloud metadata services)"
    if ip.is_unspecified or ip.is_multicast:
        return "an unspecified or multicast address"
    if ip.is_loopback:  # before is_reserved, which covers ::1
        return None if allow_private else "a loopback address (set OBSCTL_WEBHOOK_ALLOW_PRIVATE=1 to allow)"
    if ip.is_reserved:
        return "a reserved address"
    if ip.is_private or ip in _SHARED:
        return None if allow_private else "a private address (set OBSCTL_WEBHOOK_ALLOW_PRIVATE=1 to allow)"
    return None


def resolve(host: str) -> list[str]:
    """Every address of `host` (a literal IP resolves to itself)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise UnresolvableHost(f"cannot resolve {host!r}: {exc}") from None
    return sorted({info[4][0] for info in infos})


def check_destination(url: str, *, allow_private: bool, require_resolution: bool) -> None:
    """Refuse a URL whose host is or resolves to a forbidden address (UnsafeDestination).

    With `require_resolution` false (saving a webhook) a host that does not resolve now is
    accepted, since it is checked again before each delivery; with it true (delivering) the
    UnresolvableHost error propagates.
    """
    _, host = parse_webhook_url(url)
    if host.lower().rstrip(".") in _METADATA_NAMES:
        raise UnsafeDestination(f"webhook host {host!r} is a cloud metadata service")
    try:
        addresses = resolve(host)
    except UnresolvableHost:
        if require_resolution:
            raise
        return
    for address in addresses:
        problem = address_problem(address, allow_private=allow_private)
        if problem:
            raise UnsafeDestination(f"webhook host {host!r} resolves to {address}, {problem}")
