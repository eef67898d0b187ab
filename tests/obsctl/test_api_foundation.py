"""HTTP API: health, events, sessions, errors, auth, CORS, limits, rate limiting."""

import json

import pytest

from tests.conftest import event


def post_events(client, events, **kw):
    return client.post("/events", json={"events": events}, **kw)


def test_health(client):
    r = client.get("/health")
    assert r.status_code == 200
    body = r.get_json()
    assert body["status"] == "ok" and body["timestamp"].endswith("Z")


def test_post_events_and_read_back(client):
    r = post_events(client, [event("s", "session_start", agent_name="bot"),
                             event("s", tokens_in=3, tokens_out=2, event_id="e1")])
    assert r.status_code == 200
    assert r.get_json() == {"status": "ok", "processed": 2, "duplicates": 0}
    assert post_events(client, [event("s", event_id="e1")]).get_json()["duplicates"] == 1
    session = client.get("/sessions/s").get_json()
    assert session["agent_name"] == "bot"
    assert (session["total_tokens_in"], session["total_tokens_out"]) == (3, 2)
    assert [e["event_type"] for e in session["events"]] == ["session_start", "llm_call"]
    listing = client.get("/sessions").get_json()
    assert listing["total"] == 1 and listing["sessions"][0]["session_id"] == "s"


def test_invalid_events_give_400_with_every_detail_and_store_nothing(client):
    r = post_events(client, [event("a", tokens_in=-5), event("b"), event("c", timestamp="soon")])
    assert r.status_code == 400
    body = r.get_json()
    assert [(d["index"], d["field"]) for d in body["details"]] == [(0, "tokens_in"), (2, "timestamp")]
    assert "nothing stored" in body["error"]
    assert client.get("/sessions").get_json()["total"] == 0


@pytest.mark.parametrize("data", [b"{not json", b"", b"[]", b'{"events": "x"}', b'"events"', b"\xff\xfe"])
def test_malformed_bodies_are_400(client, data):
    r = client.post("/events", data=data, content_type="application/json")
    assert r.status_code == 400
    assert isinstance(r.get_json()["error"], str)


def test_oversized_batch_is_413(make_app):
    client = make_app({"OBSCTL_MAX_BATCH": "3"}).test_client()
    r = post_events(client, [event()] * 4)
    assert r.status_code == 413
    assert "at most 3" in r.get_json()["error"]


def test_oversized_body_is_413(make_app):
    client = make_app({"OBSCTL_MAX_BODY_BYTES": "2000"}).test_client()
    r = post_events(client, [event(input_data={"p": "x" * 3000})])
    assert r.status_code == 413
    assert r.get_json() == {"error": "request body too large; the limit is 2000 bytes"}


def test_unknown_session_404(client):
    r = client.get("/sessions/nope")
    assert r.status_code == 404
    assert r.get_json() == {"error": "session 'nope' not found"}


def test_unknown_route_and_wrong_method_are_json(client):
    r = client.get("/no/such/route")
    assert r.status_code == 404 and r.is_json and "error" in r.get_json()
    r = client.put("/events")
    assert r.status_code == 405 and r.get_json() == {"error": "method not allowed on this route"}


@pytest.mark.parametrize("query,status", [("limit=abc", 400), ("offset=1.5", 400), ("status=paused", 400),
                                          ("limit=0", 400), ("limit=-1", 400), ("limit=99999", 200),
                                          ("offset=-4", 400), ("offset=-1", 400),
                                          ("offset=1179502288607494453615132672", 400),
                                          ("limit=1_0", 400), ("limit=%2010", 400), ("limit=10%20", 400),
                                          ("limit=+10", 400), ("limit=", 400), ("offset=", 400)])
def test_session_list_query_validation(client, query, status):
    assert client.get(f"/sessions?{query}").status_code == status


def test_limit_is_clamped_to_200(client):
    post_events(client, [event(f"s{i:03d}") for i in range(205)])
    body = client.get("/sessions?limit=500").get_json()
    assert len(body["sessions"]) == 200 and body["total"] == 205


class TestApiKey:
    @pytest.fixture
    def client(self, make_app):
        return make_app({"SERVICE_API_KEY": "s3cret"}).test_client()

    def test_missing_key_is_401(self, client):
        r = client.get("/sessions")
        assert r.status_code == 401
        assert r.get_json() == {"error": "missing API key: send it in the X-API-Key header"}

    def test_wrong_key_is_401_and_not_echoed(self, client):
        r = post_events(client, [event()], headers={"X-API-Key": "guess"})
        assert r.status_code == 401
        assert "s3cret" not in r.get_data(as_text=True) and "guess" not in r.get_data(as_text=True)

    def test_right_key_passes(self, client):
        assert post_events(client, [event()], headers={"X-API-Key": "s3cret"}).status_code == 200
        assert client.get("/sessions", headers={"X-API-Key": "s3cret"}).status_code == 200

    def test_health_and_preflight_need_no_key(self, client):
        assert client.get("/health").status_code == 200
        r = client.options("/events", headers={"Origin": "https://app.example",
                                               "Access-Control-Request-Method": "POST"})
        assert r.status_code == 200


def test_cors_origins_from_configuration(make_app):
    client = make_app({"CORS_ORIGINS": "https://a.example,https://b.example"}).test_client()
    ok = client.get("/health", headers={"Origin": "https://b.example"})
    assert ok.headers["Access-Control-Allow-Origin"] == "https://b.example"
    other = client.get("/health", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


def test_rate_limit_headers_on_every_response(client):
    for path in ("/health", "/sessions", "/sessions/none", "/nowhere"):
        r = client.get(path)
        for name in ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"):
            assert name in r.headers, (path, name)
    assert client.get("/sessions").headers["RateLimit-Limit"] == "120"
    assert post_events(client, [event()]).headers["RateLimit-Limit"] == "60"
    assert client.get("/health").headers["RateLimit-Limit"] == "600"


def test_rate_limit_429_with_retry_after(make_app):
    client = make_app({"OBSCTL_RATE_LIMITS": "sessions=3/minute"}).test_client()
    statuses = [client.get("/sessions").status_code for _ in range(3)]
    r = client.get("/sessions/x")  # same group, shared counter
    assert statuses == [200, 200, 200]
    assert r.status_code == 429
    assert r.get_json()["error"].startswith("rate limit exceeded")
    assert int(r.headers["Retry-After"]) >= 1 and r.headers["RateLimit-Remaining"] == "0"
    assert post_events(client, [event()]).status_code == 200  # other groups unaffected


def test_rate_limits_can_be_turned_off(make_app):
    client = make_app({"OBSCTL_RATE_LIMITS": "off"}).test_client()
    assert all(client.get("/health").status_code == 200 for _ in range(700))


def test_each_app_has_its_own_limiter(make_app):
    first = make_app({"OBSCTL_RATE_LIMITS": "sessions=1/minute"}).test_client()
    assert first.get("/sessions").status_code == 200
    assert first.get("/sessions").status_code == 429
    second = make_app({"OBSCTL_RATE_LIMITS": "sessions=1/minute"}).test_client()
    assert second.get("/sessions").status_code == 200


def test_bad_rate_limit_configuration_is_a_clear_error():
    from obsctl.config import Settings
    from obsctl.errors import InvalidInput

    with pytest.raises(InvalidInput, match="OBSCTL_RATE_LIMITS"):
        Settings.from_env({"OBSCTL_RATE_LIMITS": "events=lots"})


def test_responses_are_compact_json(client):
    r = client.get("/health")
    assert r.mimetype == "application/json"
    json.loads(r.get_data())


def _route_paths(app):
    """{rule pattern: (a concrete path, the methods of every rule with that pattern)}."""
    import re

    routes: dict = {}
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", "some-id", rule.rule)
        routes.setdefault(rule.rule, (path, set()))[1].update(rule.methods)
    return routes


def test_options_allow_lists_exactly_the_methods_of_each_route(app, client):
    routes = _route_paths(app)
    assert len(routes) >= 25
    for pattern, (path, methods) in routes.items():
        r = client.options(path)
        assert r.status_code == 200, pattern
        assert r.headers["Allow"] == ", ".join(sorted(methods)), pattern


@pytest.mark.parametrize("path, allow", [
    ("/sessions/compare", "OPTIONS, POST"),  # not GET from /sessions/<session_id>
    ("/webhooks/deliveries", "GET, HEAD, OPTIONS"),  # not PUT/DELETE from /webhooks/<webhook_id>
    ("/postmortem/candidates", "GET, HEAD, OPTIONS"),  # not POST from /postmortem/<session_id>
    ("/sessions/s1", "DELETE, GET, HEAD, OPTIONS"),
])
def test_options_does_not_borrow_methods_from_neighbouring_routes(client, path, allow):
    assert client.options(path).headers["Allow"] == allow


def test_405_allow_lists_the_routes_own_methods(client):
    # (DELETE /sessions/compare deletes a session named compare: sessions can be deleted.)
    r = client.put("/sessions/compare")
    assert r.status_code == 405 and r.headers["Allow"] == "OPTIONS, POST"
    r = client.delete("/postmortem/candidates")
    assert r.status_code == 405 and r.headers["Allow"] == "GET, HEAD, OPTIONS"


def test_cors_preflight_allows_only_the_routes_methods(client):
    r = client.options("/sessions/compare", headers={"Origin": "https://app.example",
                                                     "Access-Control-Request-Method": "POST"})
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Methods"] == "OPTIONS, POST"
    assert r.headers["Access-Control-Allow-Origin"] == "https://app.example"
