"""What a benchmark reads of a server process it runs, and the raw requests it sends it: the
process's resident memory, the bytes it holds in temporary files, a request whose body it may
refuse. Linux /proc; 127.0.0.1 only."""

from __future__ import annotations

import os
import socket
from pathlib import Path


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def spooled_bytes(pid: int, directory: Path) -> int:
    """Bytes in the temporary files the server has open under `directory` (deleted or not)."""
    total = 0
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
            if target.startswith(str(directory)):
                total += os.stat(fd).st_size
        except OSError:
            continue
    return total


def raw_request(port: int, head: str, body_bytes: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    sock.sendall(head.encode())
    chunk = b"x" * 65536
    left = body_bytes
    try:
        while left > 0:
            sock.sendall(chunk[:min(left, len(chunk))])
            left -= min(left, len(chunk))
    except OSError:
        pass  # refused and closed by the server: what we hope for
    return sock
