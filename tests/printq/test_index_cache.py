"""printq.index_cache: the binary index is a pure speed-up, never a source of wrong answers."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from printq import index_cache
from printq.dataset import identity_of, load_snapshot
from printq.metrics import METRIC_NAMES
from printq.settings import BUNDLED_DATA

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture
def data_file(tmp_path) -> str:
    path = tmp_path / "prints.json"
    shutil.copy(DATA / "printq-small.json", path)
    return str(path)


@pytest.fixture
def cache_dir(tmp_path) -> str:
    return str(tmp_path / "cache")


def dump(snapshot) -> dict:
    """Everything a query can observe about a snapshot."""
    return {
        "records": snapshot.records,
        "metrics": {
            name: (column.values.typecode, list(column.values), column.average)
            for name, column in snapshot.metrics.items()
        },
    }


def index_file(cache_dir: str, data_file: str) -> Path:
    return Path(index_cache.index_path(cache_dir, data_file))


def test_first_load_writes_an_index_and_the_second_load_reads_it(data_file, cache_dir):
    parsed = load_snapshot(data_file, cache_dir)
    assert index_file(cache_dir, data_file).is_file()
    identity = identity_of(os.stat(data_file))
    cached = index_cache.read_index(cache_dir, data_file, identity)
    assert cached is not None
    from_cache = load_snapshot(data_file, cache_dir)
    assert dump(from_cache) == dump(parsed)
    assert list(from_cache.metrics) == list(METRIC_NAMES)


def test_the_bundled_dataset_round_trips_exactly(tmp_path, cache_dir):
    path = tmp_path / "bundled.json"
    shutil.copy(BUNDLED_DATA, path)
    parsed = load_snapshot(str(path), cache_dir)
    assert dump(load_snapshot(str(path), cache_dir)) == dump(parsed)


def test_write_leaves_no_temporary_files(data_file, cache_dir):
    load_snapshot(data_file, cache_dir)
    assert [p.suffix for p in Path(cache_dir).iterdir()] == [".pqidx"]


def test_an_index_of_another_file_version_is_not_used(data_file, cache_dir):
    load_snapshot(data_file, cache_dir)
    st = os.stat(data_file)
    stale = (st.st_mtime_ns + 1, st.st_size, st.st_ino)
    assert index_cache.read_index(cache_dir, data_file, stale) is None


def test_a_changed_file_is_reparsed_and_the_index_replaced(data_file, cache_dir):
    load_snapshot(data_file, cache_dir)
    Path(data_file).write_text(json.dumps([{"user_info": {"serial": 77}}]))
    st = os.stat(data_file)
    os.utime(data_file, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert list(load_snapshot(data_file, cache_dir).metrics["serial"].values) == [77]
    cached = index_cache.read_index(cache_dir, data_file, identity_of(os.stat(data_file)))
    assert cached is not None and list(cached[1]["serial"].values) == [77]
    assert len(list(Path(cache_dir).iterdir())) == 1  # one index per data path, not per version


@pytest.mark.parametrize("damage", ["flip_payload_byte", "truncate", "garbage", "empty", "wrong_magic"])
def test_a_corrupt_index_is_ignored_and_rewritten(data_file, cache_dir, damage):
    expected = dump(load_snapshot(data_file, cache_dir))
    index = index_file(cache_dir, data_file)
    blob = bytearray(index.read_bytes())
    if damage == "flip_payload_byte":
        blob[-3] ^= 0xFF
    elif damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "garbage":
        blob = bytearray(os.urandom(len(blob)))
    elif damage == "empty":
        blob = bytearray()
    else:
        blob[:8] = b"NOTPRINT"
    index.write_bytes(bytes(blob))
    identity = identity_of(os.stat(data_file))
    assert index_cache.read_index(cache_dir, data_file, identity) is None
    assert dump(load_snapshot(data_file, cache_dir)) == expected
    assert index_cache.read_index(cache_dir, data_file, identity) is not None  # rewritten


def test_an_unwritable_cache_dir_does_not_break_queries(data_file, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory should be")
    snapshot = load_snapshot(data_file, str(blocked / "cache"))
    assert snapshot.metrics["serial"].count == 4


def test_index_names_differ_for_files_with_the_same_name(tmp_path, cache_dir):
    a = index_cache.index_path(cache_dir, str(tmp_path / "a" / "prints.json"))
    b = index_cache.index_path(cache_dir, str(tmp_path / "b" / "prints.json"))
    assert a != b
    assert os.path.basename(a).startswith("prints.json-")
