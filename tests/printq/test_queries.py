"""printq.queries: exact answers, checked against an independent linear scan of the JSON."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from printq.dataset import build_snapshot, load_snapshot
from printq.errors import InvalidQuery, NoData
from printq.queries import answer, format_number, parse_number, parse_query
from printq.settings import BUNDLED_DATA

DATA = Path(__file__).parent.parent / "data"
ALL_METRICS = ["serial", "livePercent", "deadPercent", "elasticity", "cl_duration", "cl_intensity",
               "extruder1", "extruder2", "layerHeight", "layerNum", "wellplate"]
INT_METRICS = {"serial", "cl_duration", "cl_intensity", "layerNum", "wellplate"}

# The reference: the spec's rules applied by brute force, with no code from printq.
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


def reference_values(records: list, metric: str) -> list:
    out = []
    for rec in records:
        node = rec
        for key in PATHS[metric]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, (int, float)) and not isinstance(node, bool) and math.isfinite(node):
            out.append(node)
    return out


def reference_count(vals: list, metric: str, comparison: str, t: float) -> int:
    if comparison == "greater":
        return sum(1 for v in vals if v > t)
    if comparison == "lesser":
        return sum(1 for v in vals if v < t)
    if metric in INT_METRICS:
        return sum(1 for v in vals if v == t)
    return sum(1 for v in vals if abs(v - t) <= 1e-9)


@pytest.fixture(scope="module")
def real():
    """(snapshot, parsed records) of the bundled 10,000-record dataset, loaded without any cache."""
    with open(BUNDLED_DATA) as f:
        records = json.load(f)
    return load_snapshot(BUNDLED_DATA), records


def test_known_answer_live_percent_greater_50(real):
    assert answer(real[0], "livePercent", "greater", "50") == 6861


@pytest.mark.parametrize("metric", ALL_METRICS)
def test_counts_match_a_linear_scan_for_every_metric(real, metric):
    snapshot, records = real
    vals = reference_values(records, metric)
    distinct = sorted(set(vals))
    thresholds = [distinct[0], distinct[len(distinct) // 3], distinct[len(distinct) // 2], distinct[-1],
                  (distinct[0] + distinct[-1]) / 2 + 0.123, distinct[0] - 1, distinct[-1] + 1]
    for t in thresholds:
        for comparison in ("greater", "lesser", "equal"):
            expected = reference_count(vals, metric, comparison, t)
            got = answer(snapshot, metric, comparison, repr(t))
            assert got == expected, (metric, comparison, t)
            assert type(got) is int
    # every present value is found by `equal`, so equality really is exercised
    assert answer(snapshot, metric, "equal", repr(distinct[len(distinct) // 2])) > 0


@pytest.mark.parametrize("metric", ALL_METRICS)
def test_aggregates_match_a_linear_scan_with_the_right_types(real, metric):
    snapshot, records = real
    vals = reference_values(records, metric)
    maximum = answer(snapshot, metric, "greater", "Maximum")
    minimum = answer(snapshot, metric, "greater", "Minimum")
    average = answer(snapshot, metric, "greater", "Average")
    assert maximum == max(vals) and minimum == min(vals)
    assert average == statistics.fmean(vals)  # fmean: correctly rounded sum, like printq
    assert type(average) is float
    expected_type = int if metric in INT_METRICS else float
    assert type(maximum) is expected_type and type(minimum) is expected_type


def test_known_aggregates_render_as_json_numbers(real):
    snapshot = real[0]
    assert format_number(answer(snapshot, "serial", "x", "Maximum")) == "99"
    assert format_number(answer(snapshot, "serial", "x", "Average")) == "49.5"
    assert format_number(answer(snapshot, "livePercent", "x", "Minimum")) == "0.0"
    assert format_number(answer(snapshot, "deadPercent", "x", "Maximum")) == "100.0"


def test_average_of_an_integer_metric_is_a_float_even_when_whole():
    rows = [{"user_info": {"serial": 40}}, {"user_info": {"serial": 60}}]
    snapshot = build_snapshot(rows, "mem", (0, 0, 0))
    result = answer(snapshot, "serial", "greater", "Average")
    assert result == 50.0 and type(result) is float
    assert format_number(result) == "50.0"


def test_maximum_and_minimum_of_an_integer_metric_are_truncated():
    rows = [{"print_info": {"resolution": {"layerNum": v}}} for v in (3.9, 12.7, -1.5)]
    snapshot = build_snapshot(rows, "mem", (0, 0, 0))
    assert answer(snapshot, "layerNum", "x", "Maximum") == 12
    assert answer(snapshot, "layerNum", "x", "Minimum") == -1  # truncation goes toward zero
    assert type(answer(snapshot, "layerNum", "x", "Maximum")) is int


@pytest.fixture(scope="module")
def small():
    return load_snapshot(str(DATA / "printq-small.json"))


@pytest.mark.parametrize("value, expected", [
    ("50", 1), ("50.0000000001", 1), ("49.9999999999", 1),  # within 1e-9: equal
    ("50.0000000009", 1), ("49.9999999991", 1),  # 9e-10 away: still equal
    ("50.0000000015", 0), ("49.9999999985", 0),  # 1.5e-9 away: not equal
    ("50.00000001", 0), ("49.99999999", 0),  # 1e-8 away: not equal
])
def test_double_equality_uses_an_absolute_tolerance_of_1e_9(small, value, expected):
    assert answer(small, "livePercent", "equal", value) == expected


def test_integer_equality_is_exact(small):
    assert answer(small, "serial", "equal", "2") == 1
    assert answer(small, "serial", "equal", "2.0000000001") == 0


def test_a_fractional_value_on_an_integer_metric_compares_numerically(small):
    assert answer(small, "layerNum", "greater", "19.5") == 2
    assert answer(small, "layerNum", "lesser", "19.5") == 1
    assert answer(small, "layerNum", "equal", "19.5") == 0
    assert answer(small, "layerNum", "equal", "2e1") == 1


@pytest.mark.parametrize("metric, comparison, value", [
    ("LIVEPERCENT", "GREATER", "20"), ("livepercent", "Greater", "20"), ("LivePercent", "greater", "20"),
])
def test_names_are_case_insensitive(small, metric, comparison, value):
    assert answer(small, metric, comparison, value) == 2


@pytest.mark.parametrize("value", ["maximum", "MAXIMUM", "Maximum"])
def test_aggregate_names_are_case_insensitive_and_ignore_the_comparison(small, value):
    assert answer(small, "serial", "bogus", value) == 4


def test_parsed_queries_use_canonical_names():
    query = parse_query("LIVEPERCENT", "Greater", "average")
    assert query.metric.name == "livePercent" and query.aggregate == "Average"
    assert parse_query("wellPlate", "EQUAL", "6").comparison == "equal"


def test_unknown_metric_message_names_it_and_lists_all_eleven():
    with pytest.raises(InvalidQuery) as info:
        parse_query("viability", "greater", "5")
    assert "'viability'" in info.value.message
    assert all(name in info.value.message for name in ALL_METRICS)


def test_unknown_comparison_message_lists_the_valid_ones():
    expected = "Unknown comparison 'above'. Valid comparisons: greater, lesser, equal"
    with pytest.raises(InvalidQuery, match=expected):
        parse_query("serial", "above", "5")


@pytest.mark.parametrize("value", ["NaN", "nan", "Infinity", "-Infinity", "inf", "1e400", "abc", "", "1_000",
                                   " 5", "5 ", "0x10", "1e", "--5", "١٢"])
def test_non_numeric_values_that_are_not_aggregates_are_rejected(value):
    with pytest.raises(InvalidQuery, match="neither a finite number"):
        parse_query("livePercent", "greater", value)


@pytest.mark.parametrize("text, number", [
    ("50", 50), ("-3", -3), ("+7", 7), ("0.25", 0.25), ("1e3", 1000.0), (".5", 0.5), ("5.", 5.0),
    ("-0", 0), ("12345678901234567890123", 12345678901234567890123),
])
def test_parse_number_accepts_finite_decimals(text, number):
    parsed = parse_number(text)
    assert parsed == number and type(parsed) is type(number)


def test_a_metric_with_no_valid_value_is_no_data_for_every_query():
    rows = [{"print_data": {"livePercent": None, "deadPercent": 3.0}}, {"print_data": {"livePercent": "x"}}]
    snapshot = build_snapshot(rows, "mem", (0, 0, 0))
    for value in ("50", "Maximum", "Average"):
        with pytest.raises(NoData, match="No valid livePercent values"):
            answer(snapshot, "livePercent", "greater", value)
    assert answer(snapshot, "deadPercent", "greater", "1") == 1


def test_huge_integer_thresholds_compare_exactly(small):
    assert answer(small, "serial", "lesser", str(10**30)) == 4
    assert answer(small, "livePercent", "lesser", str(10**30)) == 3
    with pytest.raises(InvalidQuery, match="too large"):
        parse_query("livePercent", "equal", str(10**399))  # 400 characters: long enough, too large


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.one_of(finite, st.none(), st.booleans(), st.text(max_size=2)), max_size=40),
       threshold=finite, comparison=st.sampled_from(["greater", "lesser", "equal"]))
def test_double_counts_always_equal_a_linear_scan(values, threshold, comparison):
    records = [{"print_data": {"elasticity": v}} for v in values]
    snapshot = build_snapshot(records, "mem", (0, 0, 0))
    vals = reference_values(records, "elasticity")
    if not vals:
        return
    assert answer(snapshot, "elasticity", comparison, repr(threshold)) == reference_count(
        vals, "elasticity", comparison, threshold)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.integers(min_value=-10**6, max_value=10**6), min_size=1, max_size=40),
       threshold=st.one_of(st.integers(min_value=-10**6, max_value=10**6), finite),
       comparison=st.sampled_from(["greater", "lesser", "equal"]))
def test_integer_counts_always_equal_a_linear_scan(values, threshold, comparison):
    records = [{"user_info": {"serial": v}} for v in values]
    snapshot = build_snapshot(records, "mem", (0, 0, 0))
    assert answer(snapshot, "serial", comparison, repr(threshold)) == reference_count(
        values, "serial", comparison, threshold)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(finite, min_size=1, max_size=20), data=st.data())
def test_double_equality_matches_abs_difference_right_at_the_tolerance_edge(values, data):
    anchor = data.draw(st.sampled_from(values))
    offsets = [0.0, 1e-9, -1e-9, 1e-10, -1e-10, 1e-8, -1e-8, 9.999999e-10, 1.0000001e-9]
    offset = data.draw(st.sampled_from(offsets))
    threshold = anchor + offset
    records = [{"print_data": {"elasticity": v}} for v in values]
    snapshot = build_snapshot(records, "mem", (0, 0, 0))
    assert answer(snapshot, "elasticity", "equal", repr(threshold)) == sum(
        1 for v in values if abs(v - threshold) <= 1e-9)


@pytest.mark.parametrize("metric, closest", [
    ("livePercnt", "livePercent"), ("LIVEPERCNT", "livePercent"), ("seriel", "serial"),
    ("wellplates", "wellplate"), ("elastic", "elasticity"),
])
def test_unknown_metric_suggests_the_closest_name(metric, closest):
    with pytest.raises(InvalidQuery) as info:
        parse_query(metric, "greater", "5")
    assert info.value.message.startswith(f"Unknown metric '{metric}'. Did you mean '{closest}'? Valid metrics: ")
    assert all(name in info.value.message for name in ALL_METRICS)


@pytest.mark.parametrize("comparison, closest", [("greatr", "greater"), ("less", "lesser"), ("Equals", "equal")])
def test_unknown_comparison_suggests_the_closest_one(comparison, closest):
    with pytest.raises(InvalidQuery) as info:
        parse_query("serial", comparison, "5")
    assert info.value.message == (f"Unknown comparison '{comparison}'. Did you mean '{closest}'? "
                                  "Valid comparisons: greater, lesser, equal.")


@pytest.mark.parametrize("value, closest", [("Maximun", "Maximum"), ("avg", "Average"), ("minimm", "Minimum")])
def test_a_misspelt_aggregate_suggests_the_closest_one(value, closest):
    with pytest.raises(InvalidQuery) as info:
        parse_query("serial", "greater", value)
    assert info.value.message.endswith(f"nor an aggregate (Maximum, Minimum, Average). Did you mean '{closest}'?")


@pytest.mark.parametrize("metric, comparison, value", [
    ("viability", "greater", "5"), ("serial", "above", "5"), ("serial", "greater", "NaN"),
])
def test_no_suggestion_when_nothing_is_close(metric, comparison, value):
    with pytest.raises(InvalidQuery) as info:
        parse_query(metric, comparison, value)
    assert "Did you mean" not in info.value.message


def test_parse_number_refuses_text_over_the_length_limit_without_converting_it():
    assert parse_number("9" * 400) == int("9" * 400)
    assert parse_number("9" * 401) is None
    assert parse_number("9" * 5000) is None  # int() itself would raise ValueError here
