"""Reading files that may not be what they claim: only regular files, and only so many bytes.

A data path can name a FIFO (opening it would wait for a writer forever), a device such as
/dev/zero (reading it never ends) or a directory. ``open_regular_file`` opens without blocking and
refuses anything but a regular file; ``read_at_most`` stops reading past a limit.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_CHUNK = 16 << 20


class NotARegularFile(OSError):
    """The path exists but is a directory, FIFO, device or socket."""


class TooLarge(OSError):
    """The file holds more bytes than the caller allows."""


def describe(mode: int) -> str:
    """What kind of file ``mode`` describes, for a message ("a named pipe (FIFO)")."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular_file(path: str) -> BinaryIO:
    """``path`` opened for binary reading, or NotARegularFile. Never blocks, even on a FIFO."""
    # O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer; it has no
    # effect on reading a regular file, which is all this function ever returns.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(f"it is {describe(mode)}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_at_most(f: BinaryIO, size: int, limit: int) -> bytes:
    """The rest of ``f``, whose size was ``size`` when opened; TooLarge beyond ``limit`` bytes.

    Reads ``size + 1`` bytes first, so a file that grew since (or a /proc file, which claims
    size 0) is noticed and read on in chunks, never past ``limit + 1`` bytes in all.
    """
    if size > limit:
        raise TooLarge(f"it is {size} bytes, over the limit of {limit} bytes")
    data = f.read(size + 1)
    if len(data) <= size:
        return data
    chunks, total = [data], len(data)
    while total <= limit:
        chunk = f.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        raise TooLarge(f"it holds more than the limit of {limit} bytes")
    return b"".join(chunks)
