"""Remote reads: a read use case declared with `models.reads.Read` asked of a server's HTTP
API. A service that returns its answer Struct gets the body decoded into that Struct, so the
command renders the same type without knowing where it came from."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import msgspec

from obsctl.client.paths import api_path
from obsctl.models.reads import Read, query_params, reads_in, remote_signature


def remote_read(use_case: Callable) -> Callable[..., Any] | None:
    """`(client, **parameters) -> answer` for a service function declared as a Read in its
    area's models module (obsctl.models.<area>), else None."""
    area = use_case.__module__.split(".")[2]
    try:
        models = importlib.import_module(f"obsctl.models.{area}")
    except ModuleNotFoundError:
        return None
    read = next((r for r in reads_in(models) if r.service() is use_case), None)
    return None if read is None else _asker(read)


def _asker(read: Read) -> Callable[..., Any]:
    signature = remote_signature(read)

    def ask(client, *args, **kwargs):
        arguments = signature.bind(client, *args, **kwargs).arguments  # TypeError as locally
        body = client.get_json(_path(read, arguments), query_params(read, arguments))
        return msgspec.convert(body, read.answer) if read.typed() else body
    ask.__name__ = read.service_name
    ask.__signature__ = signature  # type: ignore[attr-defined]
    return ask


def _path(read: Read, arguments: dict[str, Any]) -> str:
    """The read's path with its ids, each one escaped segment (client/paths.py)."""
    if not read.path_params:
        return read.path
    ids = [str(arguments[p.name]) for p in read.path_params]
    template = read.path
    for param in read.path_params:
        template = template.replace(f"{{{param.name}}}", "{}")
    empty = next((p for p, i in zip(read.path_params, ids, strict=True) if i == ""), read.path_params[0])
    return api_path(template, *ids, absent=empty.absent.format(""))
