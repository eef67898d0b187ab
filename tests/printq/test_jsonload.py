"""printq.jsonload and large-file loading: the piecewise parse gives exactly the whole-file answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from printq.dataset import build_snapshot, parse_snapshot
from printq.errors import DataUnavailable
from printq.jsonload import Unsplittable, iter_array_pieces

DATA = Path(__file__).parent.parent / "data"


def pieces(text: str, piece_bytes: int) -> list[list]:
    return list(iter_array_pieces(text.encode(), piece_bytes))


def flatten(parts: list[list]) -> list:
    return [element for part in parts for element in part]


def dump(snapshot) -> dict:
    return {name: (list(c.values), c.average) for name, c in snapshot.metrics.items()} | {
        "records": snapshot.records}


def serials(n: int) -> list[dict]:
    return [{"user_info": {"serial": i}, "print_data": {"livePercent": i / 4}} for i in range(n)]


@pytest.mark.parametrize("indent", [None, 2])
def test_pieces_concatenate_to_the_whole_array(indent):
    records = serials(50)
    parts = pieces(json.dumps(records, indent=indent), piece_bytes=100)
    assert len(parts) > 5
    assert flatten(parts) == records


def test_cuts_inside_nested_objects_and_strings_are_detected_and_skipped():
    records = [
        {"notes": "a string with }, { inside", "user_info": {"serial": 1}},
        {"history": [{"a": 1}, {"b": 2}, {"c": 3}], "user_info": {"serial": 2}},
        {"deep": {"x": {"y": 1}, "z": {"w": 2}}, "user_info": {"serial": 3}},
    ] * 5
    for piece_bytes in (1, 10, 40, 100):
        assert flatten(pieces(json.dumps(records), piece_bytes)) == records


@pytest.mark.parametrize("text", [
    "[1, 2, 3]",  # small input: whole-file parse
    '{"a": [' + "{}, " * 100 + "{}]}",  # not an array
    "[" + "{}, " * 100 + "]",  # trailing comma: invalid as a whole
    "[" + "{}, " * 100 + "{}] trailing",  # garbage after the array
    "[" + '{"v": NaN}, ' * 100 + "{}]",  # NaN: orjson rejects it, the whole-file parser does not
])
def test_anything_unusual_falls_back_to_a_whole_file_parse(text):
    with pytest.raises(Unsplittable):
        pieces(text, piece_bytes=20)


@pytest.mark.parametrize("fixture", ["printq-small.json", "printq-dirty.json"])
def test_piecewise_and_whole_file_loads_agree(fixture):
    data = (DATA / fixture).read_bytes()
    whole = build_snapshot(json.loads(data), "x", (0, 0, 0))
    assert dump(parse_snapshot(data, "x", (0, 0, 0), piece_bytes=64)) == dump(whole)


def test_large_array_with_nan_still_loads_through_the_fallback():
    elements = ['{"print_data": {"livePercent": NaN}}'] + ['{"print_data": {"livePercent": 2.5}}'] * 50
    text = "[" + ", ".join(elements) + "]"
    snapshot = parse_snapshot(text.encode(), "x", (0, 0, 0), piece_bytes=64)
    assert list(snapshot.metrics["livePercent"].values) == [2.5] * 50
    assert snapshot.records == 51


def test_invalid_json_in_a_large_file_names_the_file():
    text = "[" + "{}, " * 100 + "{]"
    with pytest.raises(DataUnavailable, match="Data file big.json is not valid JSON"):
        parse_snapshot(text.encode(), "big.json", (0, 0, 0), piece_bytes=64)


def test_an_integer_metric_falls_back_to_doubles_when_a_later_piece_holds_a_fraction():
    records = [{"print_info": {"resolution": {"layerNum": n}}} for n in range(40)]
    records.append({"print_info": {"resolution": {"layerNum": 7.5}}})
    snapshot = parse_snapshot(json.dumps(records).encode(), "x", (0, 0, 0), piece_bytes=64)
    column = snapshot.metrics["layerNum"]
    assert column.values.typecode == "d"
    assert list(column.values) == sorted([float(n) for n in range(40)] + [7.5])


def test_integers_beyond_int64_fall_back_to_doubles_and_beyond_doubles_are_dropped():
    records = [{"user_info": {"serial": v}} for v in (1, 2**70, 10**400, 3)]
    column = build_snapshot(records, "x", (0, 0, 0)).metrics["serial"]
    assert list(column.values) == [1.0, 3.0, float(2**70)]
    assert column.maximum == float(2**70)


def test_many_repeated_values_sort_correctly():
    records = [{"print_info": {"wellplate": w}} for w in [96, 6, 12, 6, 96, 24, 48, 1] * 100]
    column = build_snapshot(records, "x", (0, 0, 0)).metrics["wellplate"]
    assert list(column.values) == sorted([96, 6, 12, 6, 96, 24, 48, 1] * 100)
    assert column.values.typecode == "q"
