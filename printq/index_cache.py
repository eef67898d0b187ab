"""A binary copy of a loaded dataset, so a one-shot CLI query need not parse JSON again.

One file per data path in the cache directory, named after the path. It records the data file's
path and identity (mtime_ns, size, inode) and is used only when both match exactly; anything else
about it that looks wrong (magic, version, byte order, metric list, length, CRC-32 of the arrays)
makes it a miss. A miss is never an error: the caller parses the JSON and writes a fresh index.
Writes go to a temporary file that is renamed over the old index, so readers never see half a file.

Layout (header little-endian; arrays in the writer's byte order, which the header records):
    header   magic, version, byte order, records, mtime_ns, size, inode, path length, metric count
    path     UTF-8 bytes of the data file's real path
    metrics  per metric: name, typecode, value count, average (NaN when there are no values)
    crc32    of the arrays that follow
    arrays   the sorted values of each metric, one after another
"""

from __future__ import annotations

import contextlib
import math
import os
import struct
import sys
import threading
import zlib
from array import array

from printq.files import open_regular_file
from printq.metrics import METRICS, MetricValues

MAGIC = b"PRINTQIX"
VERSION = 1
_BYTE_ORDER = 0 if sys.byteorder == "little" else 1
_HEADER = struct.Struct("<8sHB5xQqQQII")
_METRIC = struct.Struct("<32sc7xQd")
_CRC = struct.Struct("<I")
_TYPECODES = (b"q", b"d")


def index_path(cache_dir: str, data_path: str) -> str:
    """Where the index of ``data_path`` lives: readable name plus a hash of the full real path."""
    real = os.path.realpath(data_path)
    stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.path.basename(real))[:64]
    return os.path.join(cache_dir, f"{stem}-{zlib.crc32(real.encode('utf-8', 'surrogateescape')):08x}.pqidx")


def read_index(cache_dir: str, data_path: str, identity: tuple[int, int, int]):
    """``(records, {name: MetricValues})`` from a valid index of this exact file version, else None."""
    try:
        with open_regular_file(index_path(cache_dir, data_path)) as f:  # a FIFO there must not hang us
            blob = f.read()
    except OSError:
        return None
    try:
        return _decode(blob, os.path.realpath(data_path), identity)
    except (ValueError, struct.error, UnicodeDecodeError):  # truncated or garbled: a miss
        return None


def _decode(blob: bytes, real_path: str, identity: tuple[int, int, int]):
    magic, version, order, records, mtime_ns, size, inode, path_len, n_metrics = _HEADER.unpack_from(blob)
    if magic != MAGIC or version != VERSION or order != _BYTE_ORDER:
        return None
    if (mtime_ns, size, inode) != tuple(identity) or n_metrics != len(METRICS):
        return None
    offset = _HEADER.size
    if blob[offset:offset + path_len].decode("utf-8", "surrogateescape") != real_path:
        return None
    offset += path_len
    layout = []
    for metric in METRICS:
        raw_name, typecode, count, average = _METRIC.unpack_from(blob, offset)
        offset += _METRIC.size
        if raw_name.rstrip(b"\0").decode() != metric.name or typecode not in _TYPECODES:
            return None
        layout.append((metric, typecode.decode(), count, None if math.isnan(average) else average))
    (crc,) = _CRC.unpack_from(blob, offset)
    payload = memoryview(blob)[offset + _CRC.size:]
    if len(payload) != sum(count * 8 for _, _, count, _ in layout) or zlib.crc32(payload) != crc:
        return None
    metrics, start = {}, 0
    for metric, typecode, count, average in layout:
        values = array(typecode)
        values.frombytes(payload[start:start + count * 8])
        start += count * 8
        metrics[metric.name] = MetricValues(metric, values, average)
    return records, metrics


def write_index(cache_dir: str, data_path: str, identity: tuple[int, int, int], records: int,
                metrics: dict) -> None:
    """Write the index atomically. Failures are ignored: the cache is only a speed-up."""
    real = os.path.realpath(data_path).encode("utf-8", "surrogateescape")
    parts = [b"", real]
    arrays = []
    for metric in METRICS:
        mv = metrics[metric.name]
        average = float("nan") if mv.average is None else mv.average
        parts.append(_METRIC.pack(metric.name.encode(), mv.values.typecode.encode(), mv.count, average))
        arrays.append(mv.values.tobytes())
    crc = 0
    for chunk in arrays:
        crc = zlib.crc32(chunk, crc)
    parts[0] = _HEADER.pack(MAGIC, VERSION, _BYTE_ORDER, records, *identity, len(real), len(METRICS))
    parts.append(_CRC.pack(crc))
    target = index_path(cache_dir, data_path)
    # Unique per process and thread, so concurrent writers never share a temporary file.
    tmp = f"{target}.{os.getpid()}.{threading.get_ident():x}.tmp"
    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        with open(tmp, "wb") as f:
            f.writelines(parts + arrays)
        os.replace(tmp, target)  # atomic: readers see the old index or the new one, never a mix
    except OSError:  # read-only or full disk: carry on without a cache
        with contextlib.suppress(OSError):
            os.unlink(tmp)
