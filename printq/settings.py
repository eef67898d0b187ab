"""Configuration: which data file, where the index cache lives, how to serve.

Precedence for the data file: ``--data PATH`` > ``PRINTQ_DATA`` > the dataset bundled with printq.
Paths are plain strings: this module is on the query hot path and pathlib costs ~10 ms to import.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from printq.errors import InvalidSetting

BUNDLED_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bioprint-data.json")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_THREADS = 4
DEFAULT_MAX_DATA_BYTES = 1 << 30  # 1 GiB: a 1,000,000-record file is about 400 MB


class Settings:
    """Everything a CLI command or ``create_app`` needs, resolved once and passed down."""

    __slots__ = ("cache_dir", "data_path", "host", "max_data_bytes", "port", "threads")

    def __init__(self, data_path: str = BUNDLED_DATA, cache_dir: str | None = None, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT, threads: int = DEFAULT_THREADS,
                 max_data_bytes: int = DEFAULT_MAX_DATA_BYTES):
        self.data_path = data_path
        self.cache_dir = cache_dir  # None disables the binary index cache
        self.max_data_bytes = max_data_bytes  # a larger data file is refused, never read
        self.host = host
        self.port = port
        self.threads = threads

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Settings({fields})"


def resolve_data_path(option: str | os.PathLike | None, environ: Mapping[str, str] = os.environ) -> str:
    """``--data`` if given, else ``PRINTQ_DATA`` if set and non-empty, else the bundled dataset."""
    if option:
        return os.fspath(option)
    return environ.get("PRINTQ_DATA") or BUNDLED_DATA


def resolve_cache_dir(environ: Mapping[str, str] = os.environ) -> str | None:
    """``PRINTQ_CACHE_DIR`` (empty disables the cache) > ``$XDG_CACHE_HOME/printq`` > ``~/.cache/printq``."""
    if "PRINTQ_CACHE_DIR" in environ:
        return environ["PRINTQ_CACHE_DIR"] or None
    xdg = environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):  # the XDG spec says relative values are to be ignored
        return os.path.join(xdg, "printq")
    return os.path.join(os.path.expanduser("~"), ".cache", "printq")


def resolve_max_data_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """``PRINTQ_MAX_DATA_BYTES`` (a positive whole number of bytes), else 1 GiB."""
    raw = environ.get("PRINTQ_MAX_DATA_BYTES", "")
    if not raw:
        return DEFAULT_MAX_DATA_BYTES
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18 or int(raw) == 0:
        raise InvalidSetting(f"PRINTQ_MAX_DATA_BYTES must be a positive whole number of bytes, "
                             f"such as 2147483648; got {raw[:40]!r}.")
    return int(raw)


def load_settings(data: str | os.PathLike | None = None, environ: Mapping[str, str] = os.environ,
                  **serve_options) -> Settings:
    """Build Settings from CLI options and the environment. Raises InvalidSetting."""
    return Settings(resolve_data_path(data, environ), resolve_cache_dir(environ),
                    max_data_bytes=resolve_max_data_bytes(environ), **serve_options)
