"""The dashboard in a real browser: Debian's Chromium, headless, driven by Playwright against a
real `obsctl serve` on 127.0.0.1 over the demo data, on each store. A screenshot of every page
goes to tests/artifacts/screenshots/<store>/ at each run (git-ignored)."""

from __future__ import annotations

import re

import pytest

from tests.obsctl.dashboard.conftest import API_KEY, screenshot

pytestmark = pytest.mark.e2e

PAGES = {
    "overview": "/",
    "sessions": "/ui/sessions",
    "search": "/ui/search?q=crm",
    "session": "/ui/sessions/support-004",
    "triage": "/ui/sessions/support-004/triage",
    "postmortem": "/ui/sessions/research-002/postmortem",
    "compare": "/ui/compare?a=support-001&b=support-004",
    "alerts": "/ui/alerts",
    "webhooks": "/ui/webhooks",
    "sla": "/ui/sla",
    "scorecards": "/ui/scorecards",
    "scorecard": "/ui/scorecards/support-bot",
}


def log_in(page, server, path: str = "/"):
    page.goto(server.url + path)
    assert "/ui/login" in page.url
    page.get_by_label("API key").fill(API_KEY)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()


def check_accessible(page, name: str):
    """One h1; every visible form control labelled; every img-role element named."""
    assert page.locator("h1").count() == 1, name
    controls = page.locator("main input:not([type=hidden]), main select, main textarea")
    for i in range(controls.count()):
        control = controls.nth(i)
        control_id = control.get_attribute("id")
        labelled = (control_id and page.locator(f'label[for="{control_id}"]').count() == 1) \
            or control.get_attribute("aria-label")
        assert labelled, (name, control_id)
    images = page.locator('[role="img"]')
    for i in range(images.count()):
        assert images.nth(i).get_attribute("aria-label"), name


def test_the_whole_journey(page, demo_server):
    server = demo_server
    log_in(page, server, "/ui/sessions?status=error")
    # Back where the browser was going, filtered.
    assert page.url.endswith("/ui/sessions?status=error")
    rows = page.locator("table.sessions tbody tr")
    assert rows.count() == 1 and "research-002" in rows.first.inner_text()

    for name, path in PAGES.items():
        page.goto(server.url + path)
        assert page.locator("h1").count() == 1
        check_accessible(page, name)
        if name == "overview":
            page.wait_for_selector(".chart canvas")
            page.wait_for_selector('.chart[data-chart="days_tokens"] canvas')
            assert page.locator(".chart canvas").count() == 8
            assert page.locator('[data-field="total_sessions"]').inner_text() == "12"
        if name == "sla":
            page.wait_for_selector('.chart[data-chart="sla"] canvas')
        if name == "sessions":
            assert page.locator("table.sessions tbody tr").count() == 12
        if name == "search":  # every match links to its session, the words marked
            assert page.locator("table.search tbody tr mark").count() >= 1
            assert page.locator('table.search a[href^="/ui/sessions/support-"]').count() >= 1
        screenshot(page, server.backend, name)
    assert page.errors == []  # no script errors, no CSP violations reported on the console

    # Filter, then open a session from the list and expand its failing event.
    page.goto(server.url + "/ui/sessions")
    page.get_by_label("Status").select_option("completed")
    page.get_by_role("button", name="Filter").click()
    # The click starts the navigation; the URL is the new one before its page has loaded.
    page.wait_for_url(re.compile(r"status=completed"), wait_until="load")
    assert page.locator("table.sessions tbody tr").count() == 10
    page.get_by_role("link", name="support-004", exact=True).click()
    assert page.locator("h1").inner_text() == "Session support-004"
    failing = page.locator("li.event.error").first
    assert not failing.locator(".body").is_visible()
    failing.locator("summary").first.click()
    assert failing.locator(".body").is_visible()
    assert failing.locator("h3", has_text="Tool call").count() == 1
    screenshot(page, server.backend, "session-expanded")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    assert download.value.suggested_filename == "session-support-004.csv"

    # Compare from the form.
    page.goto(server.url + "/ui/compare")
    page.get_by_label("Baseline (A)").fill("support-001")
    page.get_by_label("Session B").fill("support-004")
    page.get_by_role("button", name="Compare").click()
    page.wait_for_url(re.compile(r"support-004"), wait_until="load")
    assert page.locator("table.compare").count() == 2
    # support-001's two gpt-4o-mini calls took 730 ms on average, support-004's 620 ms.
    latency = page.locator("table.latency tbody tr").first
    assert latency.inner_text().split("\t")[:5] == ["gpt-4o-mini", "730", "620", "-110", "-15.07 %"]

    # Acknowledge the fired alert.
    page.goto(server.url + "/ui/alerts")
    buttons = page.get_by_role("button", name=re.compile("^Acknowledge the alert"))
    before = buttons.count()
    assert before >= 1
    buttons.first.click()
    page.wait_for_load_state()
    assert page.get_by_role("button", name=re.compile("^Acknowledge the alert")).count() == before - 1

    # Log out: the pages want the key again.
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r"/ui/login"), wait_until="load")
    page.goto(server.url + "/ui/sessions")
    assert "/ui/login" in page.url
    assert page.errors == []


def test_keyboard_reaches_the_skip_link_and_the_navigation(page, demo_server):
    log_in(page, demo_server)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Overview"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def test_the_pages_read_without_javascript(browser, demo_server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        log_in(page, demo_server, "/ui/sessions")
        assert page.locator("table.sessions tbody tr").count() == 12
        page.goto(demo_server.url + "/ui/sessions/support-004")
        failing = page.locator("li.event.error").first
        failing.locator("summary").first.click()  # <details>: no script needed
        assert failing.locator(".body").is_visible()
        page.goto(demo_server.url + "/")
        assert page.locator(".chart canvas").count() == 0  # charts need JavaScript; the table does not
        assert page.locator("details.nojs-table table tbody tr").count() >= 24
    finally:
        context.close()


def test_a_live_event_appears_without_reloading(page, demo_server):
    import requests

    server = demo_server
    log_in(page, server)
    live = page.locator("[data-live-list] li")
    page.locator("[data-live-state]", has_text="following").wait_for(timeout=15_000)
    assert live.count() == 0
    event = {"session_id": "live-1", "event_type": "session_start", "agent_name": "<script>alert(1)</script>",
             "event_id": "live-1-start"}
    answer = requests.post(server.url + "/events", json={"events": [event]}, headers={"X-API-Key": API_KEY},
                           timeout=10)
    assert answer.status_code in (200, 201), answer.text
    live.first.wait_for(timeout=15_000)
    text = live.first.inner_text()
    assert "live-1" in text and "session_start" in text and "<script>alert(1)</script>" in text
    assert page.locator("[data-live-count]").inner_text() == "1"
    # The open session page follows its own events only.
    page.goto(server.url + "/ui/sessions/live-1")
    page.locator("[data-live-state]", has_text="following").wait_for(timeout=15_000)
    for n, session in enumerate(("other-1", "live-1")):
        sent = requests.post(server.url + "/events", headers={"X-API-Key": API_KEY}, timeout=10, json={"events": [{
            "session_id": session, "event_type": "llm_call", "model": "gpt-4o", "event_id": f"live-call-{n}"}]})
        assert sent.status_code in (200, 201), sent.text
    page.locator("[data-live-list] li").first.wait_for(timeout=15_000)
    page.wait_for_timeout(1500)
    rows = page.locator("[data-live-list] li")
    assert rows.count() == 1 and "live-1" in rows.first.inner_text() and "llm_call" in rows.first.inner_text()
    screenshot(page, server.backend, "live")


def test_a_traced_run_reads_as_a_waterfall_with_its_conversation(page, demo_server):
    """The LangChain export recorded from the real client (tests/data/otlp/langchain/), sent to
    the server as the exporter sent it: the session page shows each span after its parent with
    its name and its bar, and a model call opens on its conversation, a tool on its call."""
    import requests

    from tests.otlp_recordings import trace_bodies

    server = demo_server
    for body in trace_bodies("langchain"):
        sent = requests.post(server.url + "/v1/traces", data=body, timeout=10,
                             headers={"Content-Type": "application/x-protobuf", "X-API-Key": API_KEY})
        assert sent.status_code == 200, sent.text
    log_in(page, server, "/ui/sessions/capture-langchain-thread-1")
    rows = page.locator("ol.waterfall > li.event")
    names = rows.locator(":scope > details > summary .name").all_inner_texts()
    depths = [int(d) for d in rows.evaluate_all("rows => rows.map(r => r.dataset.depth)")]
    # Three runs of the agent: each root first, its LangGraph nodes under it, their calls under them.
    assert names[:3] == ["weather_agent", "model", "ChatOpenAI"] and depths[:3] == [0, 1, 2]
    assert names.count("weather_agent") == 3 and depths.count(0) == 3
    assert {"get_weather", "lookup_order", "explode", "tools"} <= set(names)

    # Each bar lies within its parent's: the waterfall's geometry, read from the drawn page.
    boxes = rows.evaluate_all("""rows => rows.map(r => {
        const b = r.querySelector(':scope > details > summary svg.bar rect').getBBox();
        return [b.x, b.width]; })""")
    stack: list[tuple[int, float, float]] = []
    for depth, (x, width) in zip(depths, boxes):
        assert width > 0
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            _, parent_x, parent_width = stack[-1]
            assert parent_x - 0.5 <= x and x + width <= parent_x + parent_width + 2, (depth, x, width)
        stack.append((depth, x, width))

    # The second model call: its conversation, tokens with the cached part, cost and latency.
    call = rows.filter(has=page.locator(":scope > details > summary .name", has_text="ChatOpenAI")).nth(1)
    call.locator(":scope > details > summary").click()
    roles = call.locator("ol.conversation li .role").all_inner_texts()
    assert roles[:4] == ["System", "User", "Assistant", "Tool"]  # as shown: capitalised
    assert call.locator("ol.conversation .call", has_text='→ get_weather({"city":"Paris"})').count() == 1
    facts = call.locator("dl.facts").inner_text()
    assert "150 in (64 cache read) / 30 out (8 reasoning)" in facts and "Latency" in facts and "$" in facts

    # A tool: the arguments the model asked for and what the tool returned.
    tool = rows.filter(has=page.locator(":scope > details > summary .name", has_text="get_weather")).first
    tool.locator(":scope > details > summary").click()
    assert tool.locator("dl.tool-call").inner_text().split("\n") == [
        "Tool", "get_weather", "Arguments", '{"city":"Paris"}', "Result", "Paris: sunny, 21 C"]
    screenshot(page, server.backend, "waterfall")
    assert page.errors == []
