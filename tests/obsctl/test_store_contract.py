"""The store contract: the repositories of obsctl/store/repositories/ are the whole surface.

Every method the services, the CLI and the web layer call on `store.<area>` is declared in the
area's Protocol, and the SQLite store provides every declared method with the same parameters
(its area module's function after the connection it is bound to). A second backend is held to
the same Protocols.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from pathlib import Path

import pytest

from obsctl.store import Store, repositories
from obsctl.store.sqlite.sqlite_store import REPOSITORIES

PACKAGE = Path(__file__).resolve().parents[2] / "obsctl"
CALLER_LAYERS = ("services", "web", "cli")
# Store attributes that are its repositories: area name -> Protocol.
AREAS = {name: hint for name, hint in typing.get_type_hints(Store).items()
         if getattr(hint, "__module__", "").startswith(repositories.__name__ + ".")}


def declared_methods(protocol: type) -> dict[str, typing.Callable]:
    """The methods a repository Protocol declares (its own, not those of Protocol)."""
    return {name: member for name, member in vars(protocol).items()
            if inspect.isfunction(member) and not name.startswith("_")}


def parameters(func: typing.Callable) -> list[tuple[str, object, object]]:
    """(name, kind, default) of each parameter of `func` after its first (`self`, or the
    connection a backend's area function runs on)."""
    return [(p.name, p.kind, p.default) for p in list(inspect.signature(func).parameters.values())[1:]]


def annotations(func: typing.Callable) -> list[tuple[str, object]]:
    """The annotations (as written) of the parameters after the first, and of the return."""
    signature = inspect.signature(func)
    return ([(p.name, p.annotation) for p in list(signature.parameters.values())[1:]]
            + [("return", signature.return_annotation)])


def sqlite_function(area: str, method: str) -> typing.Callable | None:
    module = importlib.import_module(f"obsctl.store.sqlite.{REPOSITORIES[area]}")
    func = getattr(module, method, None)
    return func if inspect.isfunction(func) else None


DECLARED = [(area, method) for area, protocol in sorted(AREAS.items())
            for method in sorted(declared_methods(protocol))]


def repository_calls(source: str, areas=AREAS) -> set[tuple[str, str]]:
    """(area, method) of every `store.<area>.<method>` (also `uow.`, `x.store.`) in `source`."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)):
            continue
        owner, area = node.value.value, node.value.attr
        is_store = ((isinstance(owner, ast.Name) and (owner.id in ("store", "uow") or owner.id.endswith("_store")))
                    or (isinstance(owner, ast.Attribute) and owner.attr == "store"))
        if is_store and area in areas:
            found.add((area, node.attr))
    return found


def calls_above_the_store() -> dict[tuple[str, str], list[str]]:
    """(area, method) -> the modules of services, web and cli that call it."""
    calls: dict[tuple[str, str], list[str]] = {}
    for layer in CALLER_LAYERS:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            for call in repository_calls(path.read_text(encoding="utf-8")):
                calls.setdefault(call, []).append(str(path.relative_to(PACKAGE.parent)))
    return calls


def test_the_store_has_one_repository_per_area_of_the_sqlite_store():
    assert sorted(AREAS) == sorted(REPOSITORIES)


def test_every_repository_protocol_is_an_area_of_the_store():
    protocols = {obj for obj in vars(repositories).values()
                 if isinstance(obj, type) and obj.__module__.startswith(repositories.__name__ + ".")}
    assert protocols == set(AREAS.values())


@pytest.mark.parametrize(("area", "method"), DECLARED, ids=[f"{a}.{m}" for a, m in DECLARED])
def test_the_sqlite_store_provides_the_declared_method(area, method):
    func = sqlite_function(area, method)
    assert func is not None, f"obsctl.store.sqlite.{REPOSITORIES[area]} has no function {method}"
    assert parameters(func) == parameters(declared_methods(AREAS[area])[method])


@pytest.mark.parametrize(("area", "method"), DECLARED, ids=[f"{a}.{m}" for a, m in DECLARED])
def test_the_declared_method_is_annotated_as_the_sqlite_function(area, method):
    func = sqlite_function(area, method)
    assert func is not None
    assert annotations(func) == annotations(declared_methods(AREAS[area])[method])


def postgres_function(area: str, method: str) -> typing.Callable | None:
    module = importlib.import_module(f"obsctl.store.postgres.{area}")
    func = getattr(module, method, None)
    return func if inspect.isfunction(func) else None


def test_the_postgresql_store_has_the_same_areas():
    from obsctl.store.postgres.pg_store import REPOSITORIES as PG_REPOSITORIES

    assert sorted(PG_REPOSITORIES) == sorted(AREAS)


@pytest.mark.parametrize(("area", "method"), DECLARED, ids=[f"{a}.{m}" for a, m in DECLARED])
def test_the_postgresql_store_provides_the_declared_method(area, method):
    func = postgres_function(area, method)
    assert func is not None, f"obsctl.store.postgres.{area} has no function {method}"
    assert parameters(func) == parameters(declared_methods(AREAS[area])[method])
    assert annotations(func) == annotations(declared_methods(AREAS[area])[method])


def test_every_method_called_on_a_store_area_is_declared():
    calls = calls_above_the_store()
    undeclared = {f"{area}.{method}": callers for (area, method), callers in calls.items()
                  if method not in declared_methods(AREAS[area])}
    assert undeclared == {}
    # The scan sees the callers at all: every area is used somewhere above the store.
    assert {area for area, _ in calls} == set(AREAS)


def test_the_parameter_comparison_catches_a_difference():
    def sqlite_like(db, session_id: str, *, limit: int = 10): ...

    class Declared(typing.Protocol):
        def same(self, session_id: str, *, limit: int = 10): ...
        def other_default(self, session_id: str, *, limit: int = 20): ...
        def positional(self, session_id: str, limit: int = 10): ...
        def renamed(self, session: str, *, limit: int = 10): ...

    assert parameters(sqlite_like) == parameters(Declared.same)
    for name in ("other_default", "positional", "renamed"):
        assert parameters(sqlite_like) != parameters(getattr(Declared, name)), name


def test_the_call_scan_finds_calls_through_every_spelling_of_a_store():
    source = ("def f(store, state):\n"
              "    store.sessions.get_session('s1')\n"
              "    state.store.alerts.list_rules()\n"
              "    store.run_write(lambda uow: uow.ingest.write_batch([], [], [], [], {}))\n"
              "    services.sessions.list_sessions(store)\n")
    assert repository_calls(source) == {("sessions", "get_session"), ("alerts", "list_rules"),
                                        ("ingest", "write_batch")}
