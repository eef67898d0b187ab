"""The routes and the OpenAPI operations of the read use cases an area declares (models/reads.py).

A route module serves its area's reads with one line,
`READ_PATHS, READ_MODELS = serve_reads(blueprint, obsctl.models.<area>)`; the OpenAPI document
adds both to the paths and models the module writes (web/openapi.py), so a new read of the area
touches no route module. Each read's query parameters are read from the URL by their kind
(web/http.py's readers: the same 400s as every other route) and passed to the service as
keywords; the body is its answer encoded (a Struct by msgspec, a dict as every route does).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, get_args, get_origin

import msgspec
from flask import Blueprint, Response, request

from obsctl.models.reads import QueryField, Read, query_fields, reads_in
from obsctl.web.http import bool_arg, get_settings, get_store, int_arg, json_response, str_arg
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    path_param,
    query_param,
    ref,
)


def serve_reads(blueprint: Blueprint, models: ModuleType) -> tuple[dict, tuple]:
    """Route every Read of `models` on `blueprint`; their OpenAPI paths and answer models."""
    paths: dict[str, dict] = {}
    answers = []
    for read in reads_in(models):
        blueprint.add_url_rule(_rule(read), f"read_{read.service_name}", _view(read), methods=["GET"])
        paths[read.path] = {"get": _operation(read)}
        answers.append(read.answer)
    return paths, tuple(answers)


def _rule(read: Read) -> str:
    """The Flask rule of a read's path: `{name}` as `<converter:name>`."""
    rule = read.path
    for param in read.path_params:
        converter = "" if param.converter == "string" else f"{param.converter}:"
        rule = rule.replace(f"{{{param.name}}}", f"<{converter}{param.name}>")
    return rule


def _view(read: Read):
    fields = query_fields(read.query)

    def view(**ids: str) -> Response:
        arguments = {f.attribute: _argument(f) for f in fields}
        path_values = [ids[param.name] for param in read.path_params]
        answer = read.service()(get_store(), *path_values, **arguments, **_context(read))
        if isinstance(answer, msgspec.Struct):
            return Response(msgspec.json.encode(answer), mimetype="application/json")
        return json_response(answer)
    return view


def _context(read: Read) -> dict[str, Any]:
    """What the service takes from the server's settings (models/reads.CONTEXTS)."""
    if not read.context:
        return {}
    from obsctl.services.pricing import pricer_for

    settings = get_settings()
    return {name: pricer_for(settings) if name == "pricer" else settings for name in read.context}


def _argument(field: QueryField) -> Any:
    name = next((n for n in (field.name, *field.aliases) if n in request.args), field.name)
    if field.kind is int:
        return int_arg(name)
    if field.kind is bool:
        return bool_arg(name, field.default)
    if field.kind is list:
        return request.args.getlist(name) or None
    return request.args.get(name) if field.keep_empty else str_arg(name)


def _operation(read: Read) -> dict:
    params = [path_param(p.name, p.description, p.example) for p in read.path_params]
    for field in query_fields(read.query):
        params.append(_parameter(field))
        params += [{**params[-1], "name": alias, "description": f"The older name of {field.name}", "deprecated": True}
                   for alias in field.aliases]
    return operation(read.tag, read.summary, params=params, ok=json_content(ref(read.answer)),
                     errors=error_responses(*read.errors))


def _parameter(field: QueryField) -> dict:
    annotated = _without_none(field.annotation)
    metas = [m for m in get_args(annotated)[1:] if isinstance(m, msgspec.Meta)]
    description = next((m.description for m in metas if m.description), "")
    param = next((m.extra["param"] for m in metas if m.extra and "param" in m.extra), None)
    if param is not None:  # a bounded integer: documented from its IntParam
        return int_query_param(param, description)
    schema = msgspec.json.schema(annotated)
    schema.pop("description", None)
    schema.pop("title", None)
    if field.default is not None:
        schema["default"] = field.default
    return query_param(field.name, schema, description, required=field.required)


def _without_none(annotation: Any) -> Any:
    """`X | None` -> `X` (a query parameter is optional by being absent, never null)."""
    if get_origin(annotation) is not None and type(None) in get_args(annotation):
        return next(a for a in get_args(annotation) if a is not type(None))
    return annotation
