"""Read use cases declared once: a `Read` names the GET route, the service function, its query
(a Struct, one field per query parameter) and its answer (a Struct, the response body).

The web layer routes and documents every Read of an area's models module (web/reads.py), and
the remote client asks the server for it (client/reads.py), so a read's parameters are named
in one place: here, next to the area's other models. The service is called as every command
calls it, `service(store, **parameters)` (plus what `context` names: the server's `pricer` or
`settings`); a service that returns the answer Struct itself gets it back from a server as that
Struct too, so its command renders one type, locally or under --url alike.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, get_args, get_origin, get_type_hints

import msgspec

# What a service may take besides its parameters, supplied by the server: the price table of its
# settings, or the settings themselves. A remote call leaves them to the server.
CONTEXTS = ("pricer", "settings")


class NoParameters(msgspec.Struct):
    """The query of a read that takes no parameter."""


@dataclass(frozen=True)
class PathParam:
    """An id in a read's path (`{name}` in `Read.path`): the service's first arguments, in
    order. `converter` is the route's (Flask's `path` takes ids with `/`; `string` does not),
    `absent` the service's NotFound message for an empty id (`{!r}`: the id), which the remote
    client gives without asking (no URL names an empty id)."""

    name: str
    description: str
    absent: str
    converter: str = "path"
    example: str | None = None


# A session's id: any text, `/` included; the example is a session of the bundled demo
# sample (examples/), which the fuzz test loads first so generated requests reach it too.
SESSION_ID = PathParam(
    "session_id", "Session id, percent-encoded: `/` as %2F, `%` as %25; a session named like a fixed "
    "route (batch, candidates, compare) or `.`/`..` with one character escaped, e.g. %62atch, %2E%2E",
    "session {!r} not found", example="research-002")


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
    context: tuple[str, ...] = ()  # of CONTEXTS
    path_params: tuple[PathParam, ...] = ()

    @property
    def service_name(self) -> str:
        return self.use_case.partition(":")[2]

    def service(self) -> Callable[..., Any]:
        module, _, name = self.use_case.partition(":")
        return getattr(importlib.import_module(module), name)

    def typed(self) -> bool:
        """Whether the service returns the answer Struct (else a dict of the same shape)."""
        return _returns(self.service()) is self.answer


@functools.cache
def _returns(function: Callable) -> Any:
    return get_type_hints(function).get("return")


def reads_in(module: ModuleType) -> list[Read]:
    """The Reads a models module declares, in the order it declares them."""
    return [value for value in vars(module).values() if isinstance(value, Read)]


@dataclass(frozen=True)
class QueryField:
    """One query parameter of a Read: its name in the URL, the service's keyword for it, its
    kind (str, int, bool, or list for a repeated parameter) and its type with its Meta."""

    name: str
    attribute: str
    kind: type
    annotation: Any
    default: Any  # None when the field has none
    required: bool  # the service takes it first, by position (the search's `q`)
    aliases: tuple[str, ...] = ()  # older names still read (Meta extra "aliases")
    keep_empty: bool = False  # an empty value is a value, not "absent" (Meta extra "keep_empty")


def query_fields(query: type[msgspec.Struct]) -> list[QueryField]:
    """The query parameters a query Struct declares, in field order."""
    found = []
    for f in msgspec.structs.fields(query):
        extra = _extra(f.type)
        found.append(QueryField(f.encode_name, f.name, _kind(f.type), f.type,
                                None if f.default is msgspec.NODEFAULT else f.default, f.required,
                                tuple(extra.get("aliases", ())), bool(extra.get("keep_empty"))))
    return found


def _extra(annotation: Any) -> dict:
    """The `extra` of the Meta annotations of a field's type, merged."""
    merged: dict = {}
    for arg in get_args(annotation):
        if isinstance(arg, msgspec.Meta) and arg.extra:
            merged.update(arg.extra)
        elif get_args(arg):
            merged.update(_extra(arg))
    return merged


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


def remote_signature(read: Read) -> inspect.Signature:
    """(client, *, parameters..., contexts...): the service's signature with the server's
    client in place of the store, so a command calls either the same way."""
    fields = query_fields(read.query)
    positional = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in read.path_params]
    positional += [inspect.Parameter(f.attribute, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                   for f in fields if f.required]
    keywords = [inspect.Parameter(f.attribute, inspect.Parameter.KEYWORD_ONLY, default=f.default)
                for f in fields if not f.required]
    keywords += [inspect.Parameter(c, inspect.Parameter.KEYWORD_ONLY, default=None) for c in read.context]
    return inspect.Signature([inspect.Parameter("client", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                              *positional, *keywords])


def query_params(read: Read, arguments: dict[str, Any]) -> dict[str, Any]:
    """The URL parameters of a call's keyword arguments (absent ones left out); lists as lists
    (sent repeated)."""
    fields = {f.attribute: f for f in query_fields(read.query)}
    return {fields[key].name: _sent(value) for key, value in arguments.items()
            if key in fields and value is not None and not (isinstance(value, bool) and value == fields[key].default)}


def _sent(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return list(value) if isinstance(value, tuple) else value
