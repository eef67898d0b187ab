"""Remote reads: a read use case declared with `models.reads.Read` asked of a server's HTTP
API, its answer decoded into the same Struct the service returns (so the command renders it
without knowing where it came from)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import msgspec

from obsctl.models.reads import Read, query_params, reads_in


def remote_read(use_case: Callable) -> Callable[..., Any] | None:
    """`(client, query) -> answer` for a service function declared as a Read in its area's
    models module (obsctl.models.<area>), else None."""
    area = use_case.__module__.split(".")[2]
    try:
        models = importlib.import_module(f"obsctl.models.{area}")
    except ModuleNotFoundError:
        return None
    target = f"{use_case.__module__}:{use_case.__name__}"
    read = next((r for r in reads_in(models) if r.use_case == target), None)
    return None if read is None else _asker(read)


def _asker(read: Read) -> Callable[..., Any]:
    def ask(client, query):
        return msgspec.convert(client.get_json(read.path, query_params(query)), read.answer)
    ask.__name__ = read.service_name
    return ask
