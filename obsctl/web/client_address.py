"""Which client a request comes from, for the limits kept per client address.

The peer of the connection is the client, unless it is one of OBSCTL_TRUSTED_PROXIES: then the
client is the last address of `X-Forwarded-For` that is not itself a trusted proxy (each proxy
appends the address it received the request from, so entries further left were written by
the client and prove nothing). Without trusted proxies `X-Forwarded-For` is never read.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence


def is_trusted(address: str, trusted: Sequence) -> bool:
    if not trusted:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in trusted if network.version == ip.version)


def client_address(peer: str, forwarded_for: str | None, trusted: Sequence) -> str:
    """The client's address: `peer`, or what trusted proxies say in `forwarded_for`."""
    if not forwarded_for or not is_trusted(peer, trusted):
        return peer
    client = peer
    for entry in reversed(forwarded_for.split(",")):
        address = _address(entry)
        if address is None:
            break  # unreadable: nothing left of it can be trusted either
        client = address
        if not is_trusted(address, trusted):
            break
    return client


def _address(entry: str) -> str | None:
    """An IP address from one X-Forwarded-For entry (`1.2.3.4`, `[::1]:80`, `1.2.3.4:80`)."""
    text = entry.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None
