"""The OpenAPI document covers every registered route and is well-formed 3.1."""

import re


def flask_rules(app):
    for rule in app.url_map.iter_rules():
        # The dashboard's HTML pages (obsctl/web/ui) are for browsers, not part of the JSON API.
        if rule.endpoint == "static" or rule.endpoint.startswith("dashboard."):
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            yield path, method.lower()


def test_every_route_is_documented(app, client):
    doc = client.get("/openapi.json").get_json()
    missing = [(p, m) for p, m in flask_rules(app) if m not in doc["paths"].get(p, {})]
    assert missing == []


def test_every_documented_operation_exists(app, client):
    doc = client.get("/openapi.json").get_json()
    registered = set(flask_rules(app))
    documented = {(p, m) for p, ops in doc["paths"].items() for m in ops if m != "parameters"}
    assert documented - registered == set()


def test_document_basics(client):
    doc = client.get("/openapi.json").get_json()
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["securitySchemes"]["ApiKey"]["name"] == "X-API-Key"
    refs = set(re.findall(r'"#/components/(\w+)/(\w+)"', str(doc).replace("'", '"')))
    for kind, name in refs:
        assert name in doc["components"][kind], f"dangling $ref {kind}/{name}"
    for path, ops in doc["paths"].items():
        for name in re.findall(r"{(\w+)}", path):
            for op in ops.values():
                assert any(p["name"] == name and p["in"] == "path" for p in op.get("parameters", [])), (path, name)
