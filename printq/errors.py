"""The one exception family of printq.

The core (dataset, queries) raises these; the web layer maps them to HTTP status codes and the
CLI to exit codes, each in exactly one place. The core never picks a status or exit code itself.
"""

from __future__ import annotations


class PrintqError(Exception):
    """Base class: a problem described in one sentence the user can act on."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidQuery(PrintqError):
    """Unknown metric or comparison, or a value neither numeric nor an aggregate (HTTP 400, exit 1)."""


class NoData(PrintqError):
    """The metric has no valid (non-null, numeric) value in the dataset (HTTP 404, exit 1)."""


class DataUnavailable(PrintqError):
    """The data file cannot be read or parsed and there is no earlier good load (HTTP 503, exit 2)."""


class InvalidSetting(PrintqError):
    """A setting from the environment has an unusable value (exit 2, like a usage error)."""
