"""The dashboard over the Flask test client, on both stores: pages render what the services
return, every user value is escaped, the login, CSRF and security headers hold, and the API is
untouched (X-API-Key)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from obsctl.services.alerts import evaluate_alerts
from obsctl.services.alerts.rules import create_rule
from obsctl.services.ingest import ingest_events
from obsctl.web.ui.access import CSP
from tests.conftest import event

KEY = "dash-key-1"
XSS = "<script>alert(1)</script>{{7*7}}"
PAGES = ("/", "/?window=6h", "/ui/sessions", "/ui/search", "/ui/search?q=boom", "/ui/compare", "/ui/alerts", "/ui/webhooks", "/ui/sla",
         "/ui/scorecards")


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "no CSRF token in the form"
    return match.group(1)


def _login(client, key: str = KEY):
    page = client.get("/ui/login")
    return client.post("/ui/login", data={"api_key": key, "csrf_token": _csrf(page.get_data(as_text=True)),
                                          "next": "/ui/sessions"})


def _hostile_session(store):
    ingest_events(store, [
        event("s<b>1", "session_start", agent_name=XSS, timestamp="2026-04-01T00:00:00Z"),
        event("s<b>1", "llm_call", model="gpt-4o", tokens_in=5, tokens_out=7, duration_ms=120,
              input_data={"prompt": XSS}, output_data={"text": "</pre><img src=x onerror=alert(1)>"},
              timestamp="2026-04-01T00:00:01Z"),
        event("s<b>1", "tool_call", tool_call={"tool_name": XSS, "error": "boom <i>"},
              output_data={"error": "boom <i>"}, timestamp="2026-04-01T00:00:02Z"),
    ])


def test_every_page_answers_html_with_the_security_headers(client, store):
    _hostile_session(store)
    for path in (*PAGES, "/ui/sessions/s%3Cb%3E1", "/ui/sessions/s%3Cb%3E1/triage",
                 "/ui/sessions/s%3Cb%3E1/postmortem", "/ui/scorecards/%3Cscript%3Ealert(1)%3C%2Fscript%3E%7B%7B7*7%7D%7D", "/ui/compare?a=s%3Cb%3E1&b=s%3Cb%3E1", "/ui/login"):
        r = client.get(path)
        # 404: the hostile agent has no session in the scorecards' window (its message names it).
        assert r.status_code in (200, 302, 404 if "scorecards/" in path else 200), (path, r.status_code)
        if r.status_code == 302:  # the login page, without a key, sends the browser on
            continue
        assert r.mimetype == "text/html", path
        assert r.headers["Content-Security-Policy"] == CSP
        assert "script-src 'self'" in CSP and "'unsafe-inline'" not in CSP and "frame-ancestors 'none'" in CSP
        assert r.headers["X-Frame-Options"] == "DENY" and r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["Cache-Control"] == "no-store"
        html = r.get_data(as_text=True)
        # No inline script or handler: every <script> has a src or is a JSON data block.
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert 'src="/ui/static/' in tag or 'type="application/json"' in tag, (path, tag)
        assert not re.search(r"\son[a-z]+=", html.replace("onerror=alert", "")), path
        assert " style=" not in html, path


def test_user_values_are_escaped_never_run_or_evaluated(client, store):
    _hostile_session(store)
    pages = [client.get(p).get_data(as_text=True) for p in
             ("/", "/ui/sessions", "/ui/sessions/s%3Cb%3E1", "/ui/scorecards",
              "/ui/scorecards/%3Cscript%3Ealert(1)%3C%2Fscript%3E%7B%7B7*7%7D%7D")]
    for html in pages:
        assert "<script>alert(1)" not in html and "<img src=x" not in html and "s<b>1" not in html
        assert "49" not in re.sub(r"\d{3,}", "", html) or "{{7*7}}" in html
    session_page = pages[2]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;{{7*7}}" in session_page
    assert "&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;" in session_page
    assert 'href="/ui/sessions/s%3Cb%3E1"' in pages[1]
    # The overview's chart data is a JSON block that cannot close its <script>.
    assert "</script><" not in pages[0].split('id="overview-series">')[1].split("</script>")[0]


def test_the_session_page_shows_the_tree_errors_and_links(client, store):
    ingest_events(store, [
        event("run", "session_start", agent_name="bot", timestamp="2026-04-01T00:00:00Z"),
        event("run", "llm_call", event_id="root", model="m", duration_ms=50, timestamp="2026-04-01T00:00:01Z",
              decision_trace={"reasoning": "look it up first"}),
        event("run", "tool_call", event_id="child", parent_id="root", duration_ms=20,
              tool_call={"tool_name": "search", "error": "timeout"}, output_data={"error": "timeout"},
              timestamp="2026-04-01T00:00:02Z"),
        event("run", "session_end", timestamp="2026-04-01T00:00:03Z"),
    ])
    html = client.get("/ui/sessions/run").get_data(as_text=True)
    assert 'class="event depth-1 error"' in html and "look it up first" in html and "timeout" in html
    for link in ("/ui/sessions/run/export?format=json", "/ui/sessions/run/export?format=csv",
                 "/ui/sessions/run/triage", "/ui/sessions/run/postmortem"):
        assert f'href="{link}"' in html.replace("&amp;", "&"), link
    # Four events: four bars on the timeline, and one in the waterfall for each.
    assert html.count("<rect ") == 8 and 'class="err"' in html
    csv = client.get("/ui/sessions/run/export?format=csv")
    assert csv.status_code == 200 and csv.mimetype == "text/csv" and b"search" in csv.data
    assert client.get("/ui/sessions/nope").status_code == 404
    assert "session &#39;nope&#39; not found" in client.get("/ui/sessions/nope").get_data(as_text=True)


def test_login_cookie_csrf_and_logout(make_app, store):
    _hostile_session(store)
    client = make_app({"SERVICE_API_KEY": KEY}).test_client()
    r = client.get("/ui/sessions?status=active")
    assert r.status_code == 302 and r.headers["Location"].startswith("/ui/login?next=")
    assert client.get("/").status_code == 302
    assert client.get("/ui/static/dashboard.js").status_code == 200  # assets need no login
    # A login without the session's CSRF token is refused, as is a wrong key.
    assert client.post("/ui/login", data={"api_key": KEY}).status_code == 400
    page = client.get("/ui/login").get_data(as_text=True)
    wrong = client.post("/ui/login", data={"api_key": "nope", "csrf_token": _csrf(page)})
    assert wrong.status_code == 401 and "invalid API key" in wrong.get_data(as_text=True)
    ok = _login(client)
    assert ok.status_code == 302 and ok.headers["Location"] == "/ui/sessions"
    cookie = ok.headers["Set-Cookie"]
    assert "obsctl_session=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert KEY not in cookie
    assert client.get("/ui/sessions").status_code == 200
    # The API still wants X-API-Key: the dashboard's cookie opens no API route.
    assert client.get("/sessions").status_code == 401
    assert client.get("/sessions", headers={"X-API-Key": KEY}).status_code == 200
    # Logout is a POST with the token.
    html = client.get("/ui/sessions").get_data(as_text=True)
    assert client.post("/ui/logout").status_code == 400
    assert client.post("/ui/logout", data={"csrf_token": _csrf(html)}).status_code == 302
    assert client.get("/ui/sessions").status_code == 302


def test_a_changed_key_logs_everyone_out(make_app, db_url):
    app = make_app({"SERVICE_API_KEY": KEY})
    client = app.test_client()
    _login(client)
    assert client.get("/ui/alerts").status_code == 200
    other = make_app({"SERVICE_API_KEY": "another-key"})
    moved = other.test_client()
    moved.set_cookie("obsctl_session", client.get_cookie("obsctl_session").value)
    assert moved.get("/ui/alerts").status_code == 302


def test_next_never_leaves_the_site(make_app):
    client = make_app({"SERVICE_API_KEY": KEY}).test_client()
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        page = client.get("/ui/login").get_data(as_text=True)  # a login renews the token
        r = client.post("/ui/login", data={"api_key": KEY, "csrf_token": _csrf(page), "next": target})
        assert r.headers["Location"] == "/", target


def test_the_signing_key_is_kept_in_the_database_or_taken_from_the_environment(make_app, store):
    first, second = make_app({"SERVICE_API_KEY": KEY}), make_app({"SERVICE_API_KEY": KEY})
    client = first.test_client()
    _login(client)
    # A second server on the same database accepts the first one's cookie (same stored key).
    shared = second.test_client()
    shared.set_cookie("obsctl_session", client.get_cookie("obsctl_session").value)
    assert shared.get("/ui/alerts").status_code == 200
    with store.read_snapshot():
        stored = store.dashboard.get_secret()
    assert stored and len(stored) >= 40
    # OBSCTL_SECRET_KEY wins: that server does not accept the stored key's cookies.
    own = make_app({"SERVICE_API_KEY": KEY, "OBSCTL_SECRET_KEY": "s" * 40}).test_client()
    own.set_cookie("obsctl_session", client.get_cookie("obsctl_session").value)
    assert own.get("/ui/alerts").status_code == 302


def test_acknowledge_needs_the_csrf_token(client, store, settings):
    create_rule(store, {"name": "any time", "metric": "session_count", "operator": ">=", "threshold": 0,
                        "window_minutes": 60})
    assert evaluate_alerts(store, settings)["fired"] == 1
    html = client.get("/ui/alerts").get_data(as_text=True)
    assert "Acknowledge" in html and "any time" in html
    action = re.search(r'action="(/ui/alerts/[^"]+/acknowledge)"', html).group(1)
    assert client.post(action).status_code == 400
    r = client.post(action, data={"csrf_token": _csrf(html)})
    assert r.status_code == 303
    after = client.get("/ui/alerts").get_data(as_text=True)
    assert ">Acknowledge<" not in after


def test_the_retry_form_needs_the_csrf_token_and_refuses_what_cannot_be_retried(make_app, store):
    from obsctl.services import webhooks
    from obsctl.services.webhooks.delivery import deliver_due
    from tests.obsctl.webhooks.test_webhooks_delivery import AT, fire
    from tests.webhook_receiver import Receiver

    client = make_app({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}).test_client()
    down = Receiver(mode="fail").start()
    try:
        app_settings = client.application.extensions["obsctl"].settings
        webhooks.create_webhook(store, app_settings, {"url": down.url})
        fire(store, app_settings)
        deliver_due(store, app_settings, at=AT + timedelta(hours=25), timeout=2)
        html = client.get("/ui/webhooks").get_data(as_text=True)
        action = re.search(r'action="(/ui/webhooks/deliveries/[^"]+/retry)"', html).group(1)
        assert client.post(action).status_code == 400
        assert down.requests == []
        answer = client.post(action, data={"csrf_token": _csrf(html)})
        assert (answer.status_code, answer.headers["Location"]) == (303, "/ui/webhooks")
    finally:
        down.stop()
    assert len(down.requests) == 1  # it failed again: still failed (older than 24 hours), retryable
    after = client.get("/ui/webhooks").get_data(as_text=True)
    assert "HTTP 500: receiver broken (HTTP 500)" in after and ">Retry<" in after
    missing = client.post("/ui/webhooks/deliveries/msg_nope/retry", data={"csrf_token": _csrf(html)})
    assert missing.status_code == 404 and "delivery &#39;msg_nope&#39; not found" in missing.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/ui/sessions?cursor=x", "/ui/sessions?sort=size", "/ui/sessions?status=nope",
                                  "/ui/sessions?min_tokens=9&max_tokens=1", "/ui/sessions?since=yesterday",
                                  "/ui/sessions?min_cost=lots", "/ui/search?q=%22open", "/ui/search?q=x&since=soon",
                                  "/?window=7d"])
def test_a_bad_query_is_a_400_page(client, path):
    r = client.get(path)
    assert r.status_code == 400 and r.mimetype == "text/html"


def test_unknown_api_routes_stay_json_404(client):
    r = client.get("/nope")
    assert r.status_code == 404 and r.json == {"error": "not found: no such route"}


def test_the_sessions_form_filters_and_pages_with_the_cursor(client, store):
    # 60 sessions: even ones of agent "even" (30), odd ones with a gpt-4o call; 50 a page.
    ingest_events(store, [
        event(f"s{i:02d}", "session_start", agent_name="even" if i % 2 == 0 else "odd",
              timestamp=f"2026-04-01T00:{i:02d}:00Z") for i in range(60)
    ] + [event(f"s{i:02d}", model="gpt-4o", tokens_in=i, tokens_out=0, timestamp=f"2026-04-01T00:{i:02d}:01Z")
         for i in range(1, 60, 2)])
    # An empty form field is no filter; the fields show what was asked for.
    page = client.get("/ui/sessions?agent=even&model=&tool=&sort=start").get_data(as_text=True)
    assert "30 sessions match" in page and 'value="even"' in page and 'value="start" selected' in page
    assert "Next page" not in page
    first = client.get("/ui/sessions").get_data(as_text=True)
    assert "60 sessions match" in first and "50 shown" in first and "First page" not in first
    link = re.search(r'<a rel="next" href="([^"]+)">Next page</a>', first).group(1).replace("&amp;", "&")
    second = client.get(link).get_data(as_text=True)
    # newest first: s59 .. s10 on the first page, s09 .. s00 on the second
    assert "10 shown" in second and ">s09<" in second and ">s00<" in second and ">s10<" not in second
    assert "First page" in second and "Next page" not in second
    tokens = client.get("/ui/sessions?model=gpt-4o&sort=-tokens&max_tokens=9").get_data(as_text=True)
    assert "5 sessions match" in tokens  # s01, s03, s05, s07, s09
    assert tokens.index(">s09<") < tokens.index(">s01<")


def test_the_search_page_marks_the_words_and_escapes_the_rest(client, store):
    _hostile_session(store)
    html = client.get("/ui/search?q=boom").get_data(as_text=True)
    # The tool call and its error output both say "boom <i>": one event, the text escaped and
    # only the matched word marked.
    row = re.search(r'<td class="snippet">(.*?)</td>', html, re.S).group(1)
    assert "<mark>boom</mark>" in row and "<i>" not in row and "<img" not in html
    assert 'href="/ui/sessions/s%3Cb%3E1"' in html and "1 event." in html
    assert "<script>alert(1)</script>" not in html
    assert "No event matches." in client.get("/ui/search?q=nothinglikethis").get_data(as_text=True)
