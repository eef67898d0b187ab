"""The 11 queryable metrics: canonical name, group, type, unit and where each lives in a record."""

from __future__ import annotations

from array import array


class Metric:
    """One queryable metric of a print record.

    A plain class rather than a dataclass: importing dataclasses costs the query path ~8 ms.
    """

    __slots__ = ("description", "group", "is_int", "kind", "name", "path", "unit")

    def __init__(self, name: str, group: str, kind: str, unit: str, path: tuple[str, ...], description: str):
        self.name = name
        self.group = group
        self.kind = kind  # "int" or "double"
        self.unit = unit
        self.path = path  # keys from the record down to the value
        self.description = description
        self.is_int = kind == "int"

    def __repr__(self) -> str:
        return f"Metric({self.name!r})"


class MetricValues:
    """The valid values of one metric, sorted ascending (typecode "q" when all are integers, else "d")."""

    __slots__ = ("average", "metric", "values")

    def __init__(self, metric: Metric, values: array, average: float | None):
        self.metric = metric
        self.values = values
        self.average = average  # None when there are no valid values

    @property
    def count(self) -> int:
        return len(self.values)

    @property
    def minimum(self) -> int | float | None:
        return self.values[0] if self.values else None

    @property
    def maximum(self) -> int | float | None:
        return self.values[-1] if self.values else None


# The order in which the spec's error message lists the metrics; listings use it too.
METRICS: tuple[Metric, ...] = (
    Metric("serial", "metadata", "int", "", ("user_info", "serial"), "serial number of the printer unit"),
    Metric("livePercent", "print data", "double", "%", ("print_data", "livePercent"),
           "cell viability, percentage alive by live/dead imaging"),
    Metric("deadPercent", "print data", "double", "%", ("print_data", "deadPercent"),
           "cell mortality, percentage dead by live/dead imaging"),
    Metric("elasticity", "print data", "double", "kPa", ("print_data", "elasticity"),
           "structural rigidity of the final print"),
    Metric("cl_duration", "crosslinking", "int", "ms", ("print_info", "crosslinking", "cl_duration"),
           "photocrosslinking duration"),
    Metric("cl_intensity", "crosslinking", "int", "%", ("print_info", "crosslinking", "cl_intensity"),
           "light intensity percentage"),
    Metric("extruder1", "pressure", "double", "", ("print_info", "pressure", "extruder1"),
           "pressure of extruder 1 at print time"),
    Metric("extruder2", "pressure", "double", "", ("print_info", "pressure", "extruder2"),
           "pressure of extruder 2 at print time"),
    Metric("layerHeight", "resolution", "double", "mm", ("print_info", "resolution", "layerHeight"),
           "height per layer"),
    Metric("layerNum", "resolution", "int", "", ("print_info", "resolution", "layerNum"),
           "total number of layers"),
    Metric("wellplate", "metadata", "int", "", ("print_info", "wellplate"),
           "wellplate type used (6, 12, 24, 48, 96)"),
)

METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
_BY_LOWER_NAME = {m.name.lower(): m for m in METRICS}


def find_metric(name: str) -> Metric | None:
    """The metric called ``name`` (case-insensitive), or None."""
    return _BY_LOWER_NAME.get(name.lower())
