"""printq: count, compare and aggregate bioprinting metrics from the command line or over HTTP."""

__version__ = "0.1.0"
