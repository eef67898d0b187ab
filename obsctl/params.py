"""Bounded integer parameters: each declared once, used by every entry point.

The service that owns a parameter checks it; the CLI option (obsctl/cli/options.py), the
HTTP query parameter (obsctl/web/http.py) and the OpenAPI document read the same bounds,
so the CLI and the API refuse the same values with the same message.

The one rule: a value that is not an integer, or is outside the parameter's range, is
refused (HTTP 400, CLI exit 2), and the message names the range. The single exception is a
page size (`limit`): above its maximum it counts as the maximum, because the spec caps the
session list's `limit` at 200 rather than refusing larger values. Below its minimum
(0 or negative) it is refused like everything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value

# Counts, offsets and thresholds on counts: far beyond any real table, small enough for
# SQLite's 64-bit integers and readable in a message.
MAX_COUNT = 1_000_000_000


@dataclass(frozen=True)
class IntParam:
    """An integer parameter from `low` to `high`; `capped` for page sizes (see module doc)."""

    name: str
    low: int
    high: int
    default: int | None = None
    capped: bool = False

    @property
    def range_text(self) -> str:
        """The accepted values, for messages and help texts."""
        if self.capped:
            return f"from {self.low} to {self.high} (a larger {self.name} counts as {self.high})"
        return f"from {self.low} to {self.high}"

    def check(self, value: Any, *, nullable: bool = True) -> int | None:
        """`value` as an int within the range, else InvalidInput. None gives the default,
        unless `nullable` is false (a JSON body's `null` is then refused like any non-integer).

        An integral float (`60.0` in a JSON body) is the integer it spells; a boolean is not
        a number.
        """
        if value is None and nullable:
            return self.default
        number = int(value) if type(value) is float and value.is_integer() else value
        if type(number) is not int or number < self.low or (number > self.high and not self.capped):
            raise InvalidInput(f"{self.name} must be an integer {self.range_text}; got {describe_value(value)}")
        return min(number, self.high)

    def resolve(self, value: Any) -> int:
        """check() of a parameter declared with a default: `value`, or the default for None."""
        checked = self.check(value)
        if checked is None:
            raise ValueError(f"{self.name} has no default")
        return checked

    def schema(self) -> dict:
        """The OpenAPI schema of the parameter: what the API accepts."""
        schema: dict[str, Any] = {"type": "integer", "minimum": self.low}
        if not self.capped:
            schema["maximum"] = self.high
        if self.default is not None:
            schema["default"] = self.default
        return schema
