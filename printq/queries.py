"""Parse and answer a query: ``METRIC COMPARISON VALUE`` -> one number.

The CLI and the HTTP route both call ``parse_query`` then ``run_query`` and print the result with
``format_number``, so they always give the same answer. Validation lives here, nowhere else.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

from printq.dataset import Snapshot
from printq.errors import InvalidQuery, NoData
from printq.metrics import METRIC_NAMES, METRICS, Metric, MetricValues, find_metric

COMPARISONS = ("greater", "lesser", "equal")
AGGREGATES = ("Maximum", "Minimum", "Average")
TOLERANCE = 1e-9  # absolute tolerance of `equal` on double metrics
# Longer values are refused before any conversion: every finite double fits in 400 characters
# written out in full, and Python refuses to convert integers of more than 4300 digits anyway.
MAX_NUMBER_CHARS = 400
_SHOWN_CHARS = 40  # how much of a bad name or value an error message repeats
_AGGREGATES_BY_LOWER = {a.lower(): a for a in AGGREGATES}
_NUMBER_CHARS = frozenset("0123456789+-.eE")


class Query:
    """A validated query: either a comparison with a threshold, or an aggregate."""

    __slots__ = ("aggregate", "comparison", "metric", "threshold")

    def __init__(self, metric: Metric, comparison: str | None = None, threshold: float | None = None,
                 aggregate: str | None = None):
        self.metric = metric
        self.comparison = comparison  # canonical; None for aggregates (the segment is ignored)
        self.threshold = threshold
        self.aggregate = aggregate  # canonical "Maximum", "Minimum" or "Average"

    def __repr__(self) -> str:
        return (f"Query({self.metric.name!r}, comparison={self.comparison!r}, threshold={self.threshold!r}, "
                f"aggregate={self.aggregate!r})")


def parse_number(text: str) -> int | float | None:
    """``text`` as a finite decimal number (``50``, ``-3``, ``0.25``, ``1e3``), else None.

    Integer literals stay Python ints so integer metrics compare exactly at any size. ``float()``
    alone would also accept ``nan``, ``inf``, ``1_000`` and surrounding spaces, hence the char check.
    Text longer than MAX_NUMBER_CHARS is not a number (``parse_query`` says why).
    """
    if not text or len(text) > MAX_NUMBER_CHARS or not _NUMBER_CHARS.issuperset(text):
        return None
    digits = text[1:] if text[0] in "+-" else text
    if digits.isdigit():
        return int(text)
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def shown(text: str) -> str:
    """``text`` quoted for an error message, shortened when long."""
    if len(text) > _SHOWN_CHARS:
        text = f"{text[:_SHOWN_CHARS]}... ({len(text)} characters)"
    return f"'{text}'"


def did_you_mean(word: str, choices: tuple[str, ...]) -> str:
    """`` Did you mean 'x'?`` for the choice closest to ``word`` (case-insensitive), else ``""``."""
    import difflib  # only on the error path

    if len(word) > _SHOWN_CHARS:  # nothing that long is a typo of a short name
        return ""
    by_lower = {choice.lower(): choice for choice in choices}
    close = difflib.get_close_matches(word.lower(), by_lower, n=1)
    return f" Did you mean '{by_lower[close[0]]}'?" if close else ""


def parse_query(metric: str, comparison: str, value: str) -> Query:
    """Validate the three parts of a query (names are case-insensitive). Raises InvalidQuery."""
    found = find_metric(metric)
    if found is None:
        raise InvalidQuery(f"Unknown metric {shown(metric)}.{did_you_mean(metric, METRIC_NAMES)} "
                           f"Valid metrics: {', '.join(METRIC_NAMES)}.")
    aggregate = _AGGREGATES_BY_LOWER.get(value.lower())
    if aggregate is not None:
        return Query(found, aggregate=aggregate)
    canonical = comparison.lower()
    if canonical not in COMPARISONS:
        raise InvalidQuery(f"Unknown comparison {shown(comparison)}.{did_you_mean(comparison, COMPARISONS)} "
                           f"Valid comparisons: {', '.join(COMPARISONS)}.")
    if len(value) > MAX_NUMBER_CHARS:
        raise InvalidQuery(f"Value {shown(value)} is too long: a number may have at most "
                           f"{MAX_NUMBER_CHARS} characters.")
    threshold = parse_number(value)
    if threshold is None:
        raise InvalidQuery(
            f"Value {shown(value)} is neither a finite number (such as 50, -3, 0.25 or 1e3) "
            f"nor an aggregate ({', '.join(AGGREGATES)}).{did_you_mean(value, AGGREGATES)}"
        )
    if not found.is_int and canonical == "equal":
        try:  # the tolerance window needs float arithmetic
            threshold = float(threshold)
        except OverflowError:
            raise InvalidQuery(f"Value {shown(value)} is too large to compare with {found.name}.") from None
    return Query(found, comparison=canonical, threshold=threshold)


def run_query(snapshot: Snapshot, query: Query) -> int | float:
    """The count or aggregate ``query`` asks for. Raises NoData when the metric has no valid value."""
    column = snapshot.metrics[query.metric.name]
    if not column.count:
        raise NoData(
            f"No valid {query.metric.name} values in the dataset: every record's {query.metric.name} "
            "is null, missing or not a number."
        )
    if query.aggregate is not None:
        return aggregate(column, query.aggregate)
    values, t = column.values, query.threshold
    assert t is not None  # a query without an aggregate compares with a value (parse_query)
    if query.comparison == "greater":
        return len(values) - bisect_right(values, t)
    if query.comparison == "lesser":
        return bisect_left(values, t)
    if query.metric.is_int:
        return bisect_right(values, t) - bisect_left(values, t)
    # |v - t| <= 1e-9 exactly as a float expression would say it: v - t rounds monotonically in v,
    # so the matching values are one contiguous run found by two searches on that key.
    def distance(v: float) -> float:
        return v - t

    return bisect_right(values, TOLERANCE, key=distance) - bisect_left(values, -TOLERANCE, key=distance)


def aggregate(column: MetricValues, name: str) -> int | float:
    """Maximum/Minimum (integers for integer metrics, truncated) or Average (always a float)
    of a column with values (run_query answers NoData for one without)."""
    value = column.average if name == "Average" else column.maximum if name == "Maximum" else column.minimum
    assert value is not None
    if name == "Average":
        return float(value)
    return math.trunc(value) if column.metric.is_int else float(value)


def answer(snapshot: Snapshot, metric: str, comparison: str, value: str) -> int | float:
    """Parse and run a query in one call."""
    return run_query(snapshot, parse_query(metric, comparison, value))


def format_number(number: float) -> str:
    """A number as JSON text: ``6861``, ``60.478346``, ``50.0`` (a float keeps its point)."""
    return str(number) if type(number) is int else repr(float(number))


def describe_metrics(snapshot: Snapshot) -> list[dict]:
    """One row per metric: name, group, type, unit, valid count, minimum, maximum, average."""
    rows = []
    for metric in METRICS:
        column = snapshot.metrics[metric.name]
        empty = column.count == 0
        rows.append({
            "metric": metric.name,
            "group": metric.group,
            "type": metric.kind,
            "unit": metric.unit,
            "count": column.count,
            "minimum": None if empty else aggregate(column, "Minimum"),
            "maximum": None if empty else aggregate(column, "Maximum"),
            "average": None if empty else aggregate(column, "Average"),
        })
    return rows
