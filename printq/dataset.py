"""Load the data file into per-metric sorted arrays and keep them fresh.

A load turns the JSON array of print records into one sorted ``array`` of valid values per metric
(null, missing, non-numeric and non-finite values are left out, per metric; booleans are not
numbers) plus the pre-computed average. Sorted arrays make every comparison a binary search and
give Minimum/Maximum as the first and last element.

``Dataset`` checks the file's identity (mtime_ns, size, inode) with one ``stat`` on every query and
reloads when it changed. A file that fails to load never replaces the last good snapshot.

This module is on the CLI's hot path, so it avoids slow imports (dataclasses, typing, pathlib,
logging): paths are strings and the small records are plain classes.
"""

from __future__ import annotations

import math
import os
import threading
import time
from array import array
from collections.abc import Callable
from typing import Any

from printq import index_cache
from printq.errors import DataUnavailable
from printq.files import TooLarge, open_regular_file, read_at_most
from printq.metrics import METRICS, Metric, MetricValues
from printq.settings import DEFAULT_MAX_DATA_BYTES

_MAX_DOUBLE = 1.7976931348623157e308

# (mtime_ns, size, inode): tells one version of a file from another without reading it.
FileIdentity = tuple[int, int, int]


def identity_of(st: os.stat_result) -> FileIdentity:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class Snapshot:
    """One good load of the data file. Never mutated, so threads share it without locking."""

    __slots__ = ("identity", "loaded_at", "metrics", "path", "records")

    def __init__(self, path: str, identity: FileIdentity, records: int, metrics: dict[str, MetricValues]):
        self.path = path
        self.identity = identity
        self.records = records  # every element of the top-level array, valid or not
        self.metrics = metrics
        self.loaded_at = time.time()


def _valid_number(value: object, is_int: bool) -> int | float | None:
    """``value`` as a number this metric can hold, or None when it is not a valid number."""
    # Exact type checks: bool is a subclass of int but is not a number here.
    if type(value) is float:
        if not math.isfinite(value):
            return None
        if is_int and value.is_integer():
            return int(value)  # 96.0 in an integer field is the integer 96
        return value
    if type(value) is int:
        if is_int:
            return value
        try:
            return float(value)
        except OverflowError:  # too large for a double: not a usable number
            return None
    return None


def _as_doubles(values) -> array:
    """Values as an array of doubles, leaving out integers too large for a double."""
    return array("d", [float(v) for v in values if -_MAX_DOUBLE <= v <= _MAX_DOUBLE])


def _sorted(values: array) -> array:
    """``values`` sorted. Real metrics repeat a few thousand distinct values (percentages with two
    decimals, small integers), and counting them is several times faster than a comparison sort."""
    from collections import Counter

    counts = Counter(values)
    if len(counts) * 4 > len(values):
        return array(values.typecode, sorted(values))
    out = array(values.typecode)
    for value in sorted(counts):
        out.extend(array(values.typecode, (value,)) * counts[value])
    return out


class _Columns:
    """Collects each metric's valid values from batches of records, then sorts them into a Snapshot."""

    def __init__(self) -> None:
        self.records = 0
        # Integer metrics start as int64 arrays and fall back to doubles on a fraction or a huge int.
        self.values = {m.name: array("q" if m.is_int else "d") for m in METRICS}
        self._int_metrics = {m.name for m in METRICS if m.is_int}
        # Metrics grouped by the object that holds them, so each record's parents are walked once.
        groups: dict[tuple[str, ...], list[Metric]] = {}
        for metric in METRICS:
            groups.setdefault(metric.path[:-1], []).append(metric)
        self._groups = [(parents, [(m.name, m.path[-1], m.is_int) for m in members])
                        for parents, members in groups.items()]

    def add(self, records: list) -> None:
        batch: dict[str, list] = {m.name: [] for m in METRICS}
        groups = [(parents, [(leaf, is_int, batch[name]) for name, leaf, is_int in leaves])
                  for parents, leaves in self._groups]
        for record in records:
            if type(record) is not dict:
                continue
            for parents, leaves in groups:
                node: Any = record
                for key in parents:
                    node = node.get(key)
                    if type(node) is not dict:
                        break
                else:
                    for leaf, is_int, column in leaves:
                        value = node.get(leaf)
                        kind = type(value)
                        # Fast paths for the common cases; `v - v == 0.0` is false for inf and nan.
                        if (kind is float and not is_int and value - value == 0.0) or (
                                kind is int and is_int):
                            column.append(value)
                        elif value is not None:
                            number = _valid_number(value, is_int)
                            if number is not None:
                                column.append(number)
        self.records += len(records)
        for name, column in batch.items():
            self._extend(name, column)

    def _extend(self, name: str, column: list) -> None:
        target = self.values[name]
        if target.typecode == "d":
            # Only an integer metric that fell back to doubles can still deliver ints here.
            target.extend(_as_doubles(column) if name in self._int_metrics else column)
            return
        size = len(target)
        try:
            target.extend(column)
        except (TypeError, OverflowError):  # a fraction or an integer beyond int64
            del target[size:]  # extend may have stored part of the batch before failing
            self.values[name] = _as_doubles(target.tolist() + column)

    def snapshot(self, path: str, identity: FileIdentity) -> Snapshot:
        metrics = {}
        for metric in METRICS:
            values = self.values.pop(metric.name)  # release each unsorted copy as soon as it is sorted
            values = _sorted(values)
            if not values:
                average = None
            elif values.typecode == "q":
                average = sum(values) / len(values)  # exact integer sum, correctly rounded division
            else:
                average = math.fsum(values) / len(values)
            metrics[metric.name] = MetricValues(metric, values, average)
        return Snapshot(path, identity, self.records, metrics)


_JSON_KINDS = {dict: "a single JSON object ({...})", str: "a JSON string", int: "a single number",
               float: "a single number", bool: "true or false", type(None): "null"}


def build_snapshot(records: object, path: str, identity: FileIdentity) -> Snapshot:
    """Extract every metric from parsed JSON ``records`` (which must be a list)."""
    if not isinstance(records, list):
        raise DataUnavailable(
            f"Data file {path} holds {_JSON_KINDS.get(type(records), 'something else')}, but printq "
            "needs a list of print records: a JSON array [{...}, {...}] with one object per print."
        )
    columns = _Columns()
    columns.add(records)
    return columns.snapshot(path, identity)


def _parse_json(data: bytes, path: str) -> object:
    import orjson  # only needed when the index cache misses

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    # orjson is strict: one NaN, Infinity or 1e400 would sink the whole file. The standard parser
    # accepts those (and they are then excluded per value, like any other non-finite number).
    import json

    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise DataUnavailable(f"Data file {path} is not valid JSON: {exc}.") from None


def parse_snapshot(data: bytes, path: str, identity: FileIdentity,
                   piece_bytes: int | None = None) -> Snapshot:
    """Build a Snapshot from the file's bytes: piece by piece when large, in one parse otherwise."""
    import gc

    from printq.jsonload import PIECE_BYTES, Unsplittable, iter_array_pieces  # not needed on a cache hit

    # Millions of new dicts would trigger the cyclic GC over and over (3x slower); none of them
    # can form a cycle, so collection is paused for the duration of the load.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            columns = _Columns()
            for piece in iter_array_pieces(data, piece_bytes or PIECE_BYTES):
                columns.add(piece)
            return columns.snapshot(path, identity)
        except Unsplittable:
            return build_snapshot(_parse_json(data, path), path, identity)
    finally:
        if gc_was_enabled:
            gc.enable()


def load_snapshot(path: str, cache_dir: str | None = None, max_bytes: int = DEFAULT_MAX_DATA_BYTES) -> Snapshot:
    """Load ``path``, from the binary index in ``cache_dir`` when it matches the file's identity.

    Raises DataUnavailable with a message naming the file when it cannot be read or parsed, is
    not a regular file (a FIFO, a device, a directory) or holds more than ``max_bytes`` bytes.
    """
    try:
        with open_regular_file(path) as f:
            st = os.fstat(f.fileno())
            identity = identity_of(st)
            if st.st_size > max_bytes:  # before the cache: the limit holds however the data is read
                raise TooLarge(f"it is {st.st_size} bytes, over the limit of {max_bytes} bytes")
            if cache_dir is not None:
                cached = index_cache.read_index(cache_dir, path, identity)
                if cached is not None:
                    return Snapshot(path, identity, *cached)
            data = read_at_most(f, st.st_size, max_bytes)
            # A file rewritten while we read it may be a mix of two versions: never cache that.
            unchanged = identity_of(os.fstat(f.fileno())) == identity
    except TooLarge as exc:
        raise DataUnavailable(f"Cannot load data file {path}: {exc} "
                              "(PRINTQ_MAX_DATA_BYTES sets the limit).") from None
    except OSError as exc:
        raise DataUnavailable(f"Cannot read data file {path}: {exc.strerror or exc}.") from None
    snapshot = parse_snapshot(data, path, identity)
    del data
    if cache_dir is not None and unchanged:
        index_cache.write_index(cache_dir, path, identity, snapshot.records, snapshot.metrics)
    return snapshot


class Dataset:
    """The data file, loaded on first use and reloaded whenever its identity changes. Thread-safe.

    ``snapshot()`` costs one ``stat`` when the file has not changed. A failed load is reported once
    through ``on_error`` and remembered, so a broken file is not re-parsed on every query, and the
    last good snapshot keeps answering; with no good load at all, ``snapshot()`` raises
    DataUnavailable.
    """

    def __init__(self, path: str | os.PathLike, cache_dir: str | os.PathLike | None = None,
                 on_error: Callable[[str], None] | None = None, max_bytes: int = DEFAULT_MAX_DATA_BYTES):
        self.path = os.fspath(path)
        self.cache_dir = None if cache_dir is None else os.fspath(cache_dir)
        self.max_bytes = max_bytes
        self._on_error = on_error
        self._lock = threading.Lock()
        self._good: Snapshot | None = None
        self._failed: FileIdentity | None = None
        self._error: str | None = None

    @property
    def error(self) -> str | None:
        """Why the most recent load attempt failed, or None when it succeeded."""
        return self._error

    def snapshot(self) -> Snapshot:
        """The current data, reloading first if the file changed since the last load."""
        try:
            identity: FileIdentity | None = identity_of(os.stat(self.path))
        except OSError as exc:
            identity = None
            stat_error = f"Cannot read data file {self.path}: {exc.strerror or exc}."
        good = self._good  # reading one attribute is atomic: no lock on the hot path
        if good is not None and identity == good.identity:
            return good
        with self._lock:
            good = self._good  # another thread may have reloaded while we waited
            if identity is None:
                self._record_failure(None, stat_error)
            elif good is not None and identity == good.identity:
                return good
            elif identity != self._failed:
                try:
                    good = self._good = load_snapshot(self.path, self.cache_dir, self.max_bytes)
                    self._failed, self._error = None, None
                    return good
                except DataUnavailable as exc:
                    self._record_failure(identity, exc.message)
            if good is None:
                raise DataUnavailable(self._error or f"Cannot read data file {self.path}.")
            return good

    def _record_failure(self, identity: FileIdentity | None, message: str) -> None:
        if message != self._error and self._on_error is not None:  # once per problem, not per query
            suffix = "; still answering from the last good load" if self._good else ""
            self._on_error(message + suffix)
        self._failed, self._error = identity, message
