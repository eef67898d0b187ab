"""Read use cases declared once: a `Read` names the GET route, the service function, its query
(a Struct, one field per query parameter) and its answer (a Struct, the response body).

The web layer routes and documents every Read of an area's models module (web/reads.py), and
the remote client asks the server for it (client/reads.py), so a new read names its
parameters and fields in one place: here, next to the area's other models. The service
takes the store and the query and returns the answer; the CLI builds the query from its
options and renders the answer, locally or under --url alike.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, get_args, get_origin

import msgspec


@dataclass(frozen=True)
class Read:
    """`GET path`, answered by `use_case` ("module:function", imported when first called)."""

    path: str
    use_case: str
    query: type[msgspec.Struct]
    answer: type[msgspec.Struct]
    summary: str
    tag: str
    errors: tuple[int, ...] = (400,)

    @property
    def service_name(self) -> str:
        return self.use_case.partition(":")[2]

    def service(self) -> Callable[..., Any]:
        module, _, name = self.use_case.partition(":")
        return getattr(importlib.import_module(module), name)


def reads_in(module: ModuleType) -> list[Read]:
    """The Reads a models module declares, in the order it declares them."""
    return [value for value in vars(module).values() if isinstance(value, Read)]


@dataclass(frozen=True)
class QueryField:
    """One query parameter of a Read: its name in the URL, its Python name, its kind (str,
    int, bool, or list for a repeated parameter) and its type with its Meta (for the schema)."""

    name: str
    attribute: str
    kind: type
    annotation: Any


def query_fields(query: type[msgspec.Struct]) -> list[QueryField]:
    """The query parameters a query Struct declares, in field order."""
    return [QueryField(f.encode_name, f.name, _kind(f.type), f.type)
            for f in msgspec.structs.fields(query)]


def _kind(annotation: Any) -> type:
    """str, int, bool or list: what a field takes, under Annotated and Optional."""
    while True:
        origin = get_origin(annotation)
        if origin is None:
            break
        if origin is list:
            return list
        inner = [a for a in get_args(annotation) if a is not type(None)]
        annotation = inner[0]
    if annotation not in (str, int, bool):
        raise TypeError(f"a query parameter is a str, an int, a bool or a list of str; got {annotation!r}")
    return annotation


def query_params(query: msgspec.Struct) -> dict[str, Any]:
    """The parameters a query sends (URL names; absent ones left out), for the remote client."""
    return {name: value for name, value in msgspec.to_builtins(query).items() if value is not None}
