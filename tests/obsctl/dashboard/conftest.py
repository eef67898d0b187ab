"""The browser tests' fixtures: Debian's Chromium driven headless by Playwright (never a
downloaded browser), and a real `obsctl serve` over the demo data on 127.0.0.1 per store.

Without Chromium the browser tests skip with one summary line
(tests/conftest.py); with CI=true they fail instead (.ci/run installs the `chromium` package).
CHROMIUM_PATH names another executable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import backends
from tests.conftest import _require, start_server

ROOT = Path(__file__).resolve().parents[3]
SCREENSHOTS = ROOT / "tests" / "artifacts" / "screenshots"
API_KEY = "dashboard-test-key"


def chromium_path() -> str | None:
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    return path if Path(path).is_file() else None


def chromium_unavailable_reason() -> str | None:
    if chromium_path() is None:
        return "no Chromium at /usr/bin/chromium (apt-get install chromium, or set CHROMIUM_PATH)"
    return None


@pytest.fixture(scope="session")
def browser():
    _require("Chromium", chromium_unavailable_reason())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                             args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield browser
        browser.close()


def _cli(db_url: str, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "obsctl", "--db", db_url, *args], check=True,
                   capture_output=True, env={**os.environ, "OBSCTL_RATE_LIMITS": "off"})


@pytest.fixture(scope="module", params=backends.BACKENDS)
def demo_server(request, tmp_path_factory):
    """`obsctl serve` with SERVICE_API_KEY over the demo data, a fired alert and SLA checks."""
    name = request.param
    _require("Chromium", chromium_unavailable_reason())
    schema = None
    if name == "postgresql":
        _require("PostgreSQL", backends.unavailable_reason())
        schema, db_url = backends.new_schema()
    else:
        db_url = str(tmp_path_factory.mktemp("dashboard") / "obsctl.db")
    tmp = tmp_path_factory.mktemp("dashboard-serve")
    events = tmp / "events.jsonl"
    events.write_bytes(subprocess.run([sys.executable, str(ROOT / "examples" / "generate_demo.py"), "--now"],
                                      check=True, capture_output=True).stdout)
    _cli(db_url, "ingest", str(events))
    _cli(db_url, "alerts", "rules", "add", "--name", "error rate above 10%", "--metric", "error_rate",
         "--operator", ">", "--threshold", "10", "--window-minutes", "1440")
    _cli(db_url, "alerts", "evaluate")
    _cli(db_url, "sla", "set", "research-agent", "error_rate", "<=", "5", "--window-hours", "48")
    _cli(db_url, "sla", "set", "support-agent", "p95_duration_ms", "<=", "60000", "--window-hours", "48")
    _cli(db_url, "sla", "check")
    server = start_server(db_url, tmp, {"OBSCTL_RATE_LIMITS": "off", "SERVICE_API_KEY": API_KEY,
                                         # every page left open in the journey may hold a live stream
                                         "OBSCTL_MAX_STREAMS": "8"})
    server.backend = name
    try:
        yield server
    finally:
        server.stop()
        if schema:
            backends.drop_schema(schema)


@pytest.fixture
def page(browser, demo_server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("console", lambda msg: page.errors.append(msg.text) if msg.type == "error" else None)
    yield page
    context.close()


def screenshot(page, backend: str, name: str) -> Path:
    """Write the page's screenshot to tests/artifacts/screenshots/<backend>/<name>.png."""
    folder = SCREENSHOTS / backend
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
