"""printq.dataset: what counts as a valid value, and how the cache follows the file."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest

from printq.dataset import Dataset, load_snapshot
from printq.errors import DataUnavailable
from printq.files import TooLarge, read_at_most
from printq.settings import BUNDLED_DATA, resolve_cache_dir, resolve_data_path

DATA = Path(__file__).parent.parent / "data"

# Where each metric lives in a record, written out here rather than taken from printq.metrics.
PATHS = {
    "livePercent": ("print_data", "livePercent"),
    "deadPercent": ("print_data", "deadPercent"),
    "elasticity": ("print_data", "elasticity"),
    "cl_duration": ("print_info", "crosslinking", "cl_duration"),
    "cl_intensity": ("print_info", "crosslinking", "cl_intensity"),
    "extruder1": ("print_info", "pressure", "extruder1"),
    "extruder2": ("print_info", "pressure", "extruder2"),
    "layerHeight": ("print_info", "resolution", "layerHeight"),
    "layerNum": ("print_info", "resolution", "layerNum"),
    "wellplate": ("print_info", "wellplate"),
    "serial": ("user_info", "serial"),
}


def record(**values) -> dict:
    """A nested print record holding only the given metrics."""
    out: dict = {}
    for name, value in values.items():
        *parents, leaf = PATHS[name]
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return out


def write(path: Path, content) -> Path:
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def bump_mtime(path: Path) -> None:
    """Make sure a rewrite is visible even on filesystems with coarse timestamps."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def values(snapshot, name: str) -> list:
    return list(snapshot.metrics[name].values)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PRINTQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PRINTQ_DATA", raising=False)


def test_bundled_dataset_has_10000_records_and_ships_in_the_package():
    snapshot = load_snapshot(BUNDLED_DATA)
    assert snapshot.records == 10000
    assert all(column.count == 10000 for column in snapshot.metrics.values())
    assert Path(BUNDLED_DATA).parent.parent.name == "printq"


def test_values_are_sorted_and_aggregates_precomputed(tmp_path):
    path = write(tmp_path / "d.json", [record(livePercent=v) for v in (30.5, 10.0, 20.25)])
    column = load_snapshot(str(path)).metrics["livePercent"]
    assert list(column.values) == [10.0, 20.25, 30.5]
    assert (column.minimum, column.maximum, column.average) == (10.0, 30.5, 20.25)


def test_null_missing_strings_bools_and_containers_are_excluded_per_metric(tmp_path):
    rows = [
        record(livePercent=None, serial=1),
        record(livePercent="50", serial=2),
        record(livePercent=True, serial=False),
        record(livePercent=[1], serial={"x": 1}),
        record(serial=5),  # livePercent missing entirely
        record(livePercent=42.0),  # serial missing
    ]
    snapshot = load_snapshot(str(write(tmp_path / "d.json", rows)))
    assert values(snapshot, "livePercent") == [42.0]
    assert values(snapshot, "serial") == [1, 2, 5]
    assert snapshot.records == 6


def test_non_object_records_and_wrongly_shaped_parents_are_skipped(tmp_path):
    rows = [1, "x", None, [record(serial=9)], {"user_info": "not an object"}, {"serial": 7}, record(serial=3)]
    snapshot = load_snapshot(str(write(tmp_path / "d.json", rows)))
    assert values(snapshot, "serial") == [3]
    assert snapshot.records == 7


def test_the_dirty_file_keeps_only_its_one_clean_record():
    snapshot = load_snapshot(str(DATA / "printq-dirty.json"))
    assert snapshot.records == 4
    assert values(snapshot, "livePercent") == [37.87]
    assert values(snapshot, "extruder2") == [97.0]  # an integer in a double metric becomes a double
    assert values(snapshot, "wellplate") == [1]
    assert all(column.count == 1 for column in snapshot.metrics.values())


def test_integer_metrics_store_ints_and_accept_integral_floats(tmp_path):
    content = '[{"print_info": {"wellplate": 96.0}}, {"print_info": {"wellplate": 6}}]'
    path = write(tmp_path / "d.json", content)
    column = load_snapshot(str(path)).metrics["wellplate"]
    assert column.values.typecode == "q"
    assert list(column.values) == [6, 96]
    assert column.average == 51.0


def test_an_integer_metric_with_a_fraction_keeps_it(tmp_path):
    path = write(tmp_path / "d.json", [record(layerNum=12.5), record(layerNum=3)])
    assert values(load_snapshot(str(path)), "layerNum") == [3.0, 12.5]


def test_nan_infinity_and_out_of_range_numbers_are_excluded_not_fatal(tmp_path):
    content = (
        '[{"print_data": {"livePercent": NaN, "deadPercent": 1e400}, "user_info": {"serial": 1}},'
        ' {"print_data": {"livePercent": -Infinity, "deadPercent": 5.5}, "user_info": {"serial": 2}}]'
    )
    snapshot = load_snapshot(str(write(tmp_path / "d.json", content)))
    assert values(snapshot, "livePercent") == []
    assert values(snapshot, "deadPercent") == [5.5]
    assert values(snapshot, "serial") == [1, 2]


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "is not valid JSON"),
    ('{"records": []}', "holds a single JSON object ({...}), but printq needs a list of print records"),
    ('"prints"', "holds a JSON string, but printq needs a list of print records"),
    ("42", "holds a single number, but printq needs a list of print records"),
    ("", "is not valid JSON"),
])
def test_unparseable_files_raise_data_unavailable_naming_the_file(tmp_path, content, fragment):
    path = write(tmp_path / "bad.json", content)
    with pytest.raises(DataUnavailable) as info:
        load_snapshot(str(path))
    assert str(path) in info.value.message
    assert fragment in info.value.message


def test_missing_file_and_directory_raise_data_unavailable(tmp_path):
    with pytest.raises(DataUnavailable, match="No such file or directory"):
        Dataset(tmp_path / "nope.json").snapshot()
    with pytest.raises(DataUnavailable, match="is a directory"):
        Dataset(tmp_path).snapshot()


def test_snapshot_is_reused_while_the_file_is_unchanged(tmp_path):
    dataset = Dataset(write(tmp_path / "d.json", [record(serial=1)]))
    assert dataset.snapshot() is dataset.snapshot()


def test_reloads_when_the_file_changes(tmp_path):
    path = write(tmp_path / "d.json", [record(serial=1)])
    dataset = Dataset(path)
    assert values(dataset.snapshot(), "serial") == [1]
    write(path, [record(serial=1), record(serial=2)])
    bump_mtime(path)
    assert values(dataset.snapshot(), "serial") == [1, 2]


def test_reloads_when_the_file_is_atomically_replaced(tmp_path):
    path = write(tmp_path / "d.json", [record(serial=1)])
    dataset = Dataset(path)
    dataset.snapshot()
    os.replace(write(tmp_path / "new.json", [record(serial=8)]), path)  # new inode
    assert values(dataset.snapshot(), "serial") == [8]


def test_broken_rewrite_keeps_the_last_good_data_and_reports_once(tmp_path):
    path = write(tmp_path / "d.json", [record(serial=1)])
    reported: list[str] = []
    dataset = Dataset(path, on_error=reported.append)
    good = dataset.snapshot()
    write(path, "[{truncated")
    bump_mtime(path)
    assert dataset.snapshot() is good
    assert dataset.snapshot() is good
    assert len(reported) == 1 and str(path) in reported[0] and "last good load" in reported[0]
    assert "not valid JSON" in dataset.error
    write(path, [record(serial=2)])  # fixed: picked up on the next query
    bump_mtime(path)
    bump_mtime(path)
    assert values(dataset.snapshot(), "serial") == [2]
    assert dataset.error is None


def test_deleted_file_keeps_the_last_good_data(tmp_path):
    path = write(tmp_path / "d.json", [record(serial=1)])
    dataset = Dataset(path)
    good = dataset.snapshot()
    path.unlink()
    assert dataset.snapshot() is good
    assert "No such file" in dataset.error


def test_no_good_load_yet_raises_until_the_file_is_fixed(tmp_path):
    path = write(tmp_path / "d.json", "oops")
    dataset = Dataset(path)
    with pytest.raises(DataUnavailable, match="not valid JSON"):
        dataset.snapshot()
    write(path, [record(serial=4)])
    bump_mtime(path)
    assert values(dataset.snapshot(), "serial") == [4]


def test_concurrent_queries_during_a_reload_see_old_or_new_data_never_an_error(tmp_path):
    path = write(tmp_path / "d.json", [record(serial=1)])
    dataset = Dataset(path)
    dataset.snapshot()
    seen, errors = set(), []

    def reader():
        for _ in range(200):
            try:
                seen.add(tuple(values(dataset.snapshot(), "serial")))
            except Exception as exc:  # noqa: BLE001 - any error at all is what this test looks for
                errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for thread in threads:
        thread.start()
    os.replace(write(tmp_path / "new.json", [record(serial=1), record(serial=2)]), path)
    for thread in threads:
        thread.join()
    assert not errors
    assert seen <= {(1,), (1, 2)}
    assert values(dataset.snapshot(), "serial") == [1, 2]


def test_data_path_precedence_option_then_env_then_bundled():
    assert resolve_data_path("x.json", {"PRINTQ_DATA": "y.json"}) == "x.json"
    assert resolve_data_path(None, {"PRINTQ_DATA": "y.json"}) == "y.json"
    assert resolve_data_path(None, {"PRINTQ_DATA": ""}) == BUNDLED_DATA
    assert resolve_data_path(None, {}) == BUNDLED_DATA


def test_cache_dir_resolution(tmp_path):
    home = os.path.expanduser("~")
    assert resolve_cache_dir({"PRINTQ_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}) == "/c"
    assert resolve_cache_dir({"PRINTQ_CACHE_DIR": ""}) is None
    assert resolve_cache_dir({"XDG_CACHE_HOME": "/x"}) == "/x/printq"
    assert resolve_cache_dir({"XDG_CACHE_HOME": "relative"}) == f"{home}/.cache/printq"
    assert resolve_cache_dir({}) == f"{home}/.cache/printq"


@pytest.mark.parametrize("content", ['{"records": []}', '"prints"', "42", "true", "null"])
def test_a_file_that_is_not_an_array_never_says_python_type_names(tmp_path, content):
    with pytest.raises(DataUnavailable) as info:
        load_snapshot(str(write(tmp_path / "bad.json", content)))
    message = info.value.message
    assert "a JSON array [{...}, {...}] with one object per print" in message
    for python_name in ("dict", "str", "int", "float", "bool", "NoneType"):
        assert re.search(rf"\b{python_name}\b", message) is None, python_name


def test_a_file_over_the_byte_limit_is_refused_before_it_is_read(tmp_path):
    path = write(tmp_path / "d.json", [record(serial=1)] * 20)
    size = path.stat().st_size
    with pytest.raises(DataUnavailable) as info:
        load_snapshot(str(path), max_bytes=size - 1)
    assert info.value.message == (f"Cannot load data file {path}: it is {size} bytes, over the limit of "
                                  f"{size - 1} bytes (PRINTQ_MAX_DATA_BYTES sets the limit).")
    assert values(load_snapshot(str(path), max_bytes=size), "serial") == [1] * 20


def test_the_byte_limit_also_applies_when_the_index_cache_holds_the_file(tmp_path):
    path = write(tmp_path / "d.json", [record(serial=1)])
    load_snapshot(str(path), str(tmp_path / "cache"))  # writes the index
    with pytest.raises(DataUnavailable, match="over the limit"):
        load_snapshot(str(path), str(tmp_path / "cache"), max_bytes=path.stat().st_size - 1)


def test_a_file_whose_size_says_zero_is_still_read_up_to_the_limit(tmp_path):
    # /proc files report size 0 but have content: they are read on, in chunks, to the limit.
    with open("/proc/self/status", "rb") as f:
        assert len(read_at_most(f, 0, 1 << 20)) > 0
    with open("/proc/self/status", "rb") as f, pytest.raises(TooLarge):
        read_at_most(f, 0, 10)
