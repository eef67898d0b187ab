"""Configuration: which data file, where the index cache lives, how to serve.

Precedence for the data file: ``--data PATH`` > ``PRINTQ_DATA`` > the dataset bundled with printq.
Paths are plain strings: this module is on the query hot path and pathlib costs ~10 ms to import.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

BUNDLED_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bioprint-data.json")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_THREADS = 4


class Settings:
    """Everything a CLI command or ``create_app`` needs, resolved once and passed down."""

    __slots__ = ("cache_dir", "data_path", "host", "port", "threads")

    def __init__(self, data_path: str = BUNDLED_DATA, cache_dir: str | None = None, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT, threads: int = DEFAULT_THREADS):
        self.data_path = data_path
        self.cache_dir = cache_dir  # None disables the binary index cache
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


def load_settings(data: str | os.PathLike | None = None, environ: Mapping[str, str] = os.environ,
                  **serve_options) -> Settings:
    """Build Settings from CLI options and the environment."""
    return Settings(resolve_data_path(data, environ), resolve_cache_dir(environ), **serve_options)
