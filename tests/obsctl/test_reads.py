"""Every read declared with models/reads.py: its service takes what the declaration says it
will be given (the path's ids first, then the query's fields, then the server's context), the
remote client asks for it with the same parameters, and the app routes and documents it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import obsctl.models
from obsctl.client.reads import remote_read
from obsctl.models.reads import CONTEXTS, Read, query_fields, reads_in


def _declared() -> list[Read]:
    found = []
    for module in pkgutil.iter_modules(obsctl.models.__path__):
        found += reads_in(importlib.import_module(f"obsctl.models.{module.name}"))
    return found


READS = _declared()


def test_reads_are_declared():
    assert {"/agents", "/search", "/incidents", "/triage/{session_id}"} <= {r.path for r in READS}


@pytest.mark.parametrize("read", READS, ids=[r.path for r in READS])
def test_the_service_takes_what_the_read_gives(read):
    service = read.service()
    parameters = list(inspect.signature(service).parameters.values())[1:]  # after the store
    fields = query_fields(read.query)
    positional = [p.name for p in read.path_params] + [f.attribute for f in fields if f.required]
    assert [p.name for p in parameters[:len(positional)]] == positional
    keywords = {p.name for p in parameters}
    assert {f.attribute for f in fields} | set(read.context) <= keywords
    assert set(read.context) <= set(CONTEXTS)
    for param in read.path_params:
        assert f"{{{param.name}}}" in read.path and "{!r}" in param.absent


@pytest.mark.parametrize("read", READS, ids=[r.path for r in READS])
def test_the_remote_client_asks_with_the_same_parameters(read):
    service = read.service()
    remote = remote_read(service)
    assert remote is not None and remote.__name__ == service.__name__
    local = [p for p in inspect.signature(service).parameters if p not in ("at", "timeout")][1:]
    assert list(inspect.signature(remote).parameters)[1:] == [
        *[p.name for p in read.path_params], *[f.attribute for f in query_fields(read.query) if f.required],
        *[f.attribute for f in query_fields(read.query) if not f.required], *read.context]
    assert set(local) <= set(inspect.signature(remote).parameters)


def test_each_read_is_routed_and_documented(client):
    document = client.get("/openapi.json").get_json()
    for read in READS:
        operation = document["paths"][read.path]["get"]
        assert operation["summary"] == read.summary
        assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{read.answer.__name__}"}
