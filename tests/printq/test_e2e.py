"""End to end: a real ``printq serve`` process on 127.0.0.1, queried over HTTP with requests."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.e2e

DATA = Path(__file__).parent.parent / "data"
PRINTQ = Path(sys.executable).with_name("printq")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(tmp_path, *args: str):
    """Start ``printq serve ARGS`` on a free port; return (base_url, process) once /health answers."""
    port = free_port()
    env = {**os.environ, "PRINTQ_CACHE_DIR": str(tmp_path / "cache"), "PORT": str(port)}
    env.pop("PRINTQ_DATA", None)
    process = subprocess.Popen([str(PRINTQ), "serve", *args], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            if requests.get(f"{base}/health", timeout=1).status_code == 200:
                return base, process
        except requests.ConnectionError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"printq serve did not start: {process.communicate()[1]}")
        time.sleep(0.05)


@pytest.fixture
def server(tmp_path):
    """(base_url, data file, process) for a server over a copy of the small fixture file."""
    data = tmp_path / "prints.json"
    shutil.copy(DATA / "printq-small.json", data)
    base, process = start(tmp_path, "--data", str(data), "--threads", "4")
    yield base, data, process
    if process.poll() is None:
        process.kill()
        process.wait()


def test_serves_the_bundled_dataset_by_default(tmp_path):
    base, process = start(tmp_path)
    try:
        assert requests.get(f"{base}/api/prints/livePercent/greater/50", timeout=5).text == "6861"
        assert requests.get(f"{base}/health", timeout=5).json()["records"] == 10000
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


def test_serves_queries_reloads_and_stops_cleanly_on_sigterm(server):
    base, data, process = server
    session = requests.Session()

    response = session.get(f"{base}/api/prints/livePercent/greater/20")
    assert (response.status_code, response.text, response.headers["Content-Type"]) == (
        200, "2", "application/json")
    assert session.get(f"{base}/api/prints/serial/bogus/Average").json() == 2.5

    bad = session.get(f"{base}/api/prints/viability/greater/1")
    assert bad.status_code == 400 and "wellplate" in bad.json()["Message"]
    assert session.get(f"{base}/nope").status_code == 404
    assert session.post(f"{base}/api/prints/serial/greater/1").status_code == 405

    # An atomic rewrite is picked up on the next request ...
    replacement = data.with_name("next.json")
    replacement.write_text(json.dumps([{"user_info": {"serial": 7}}]))
    os.replace(replacement, data)
    assert session.get(f"{base}/api/prints/serial/greater/0").text == "1"
    # ... and a broken one is not: the last good data keeps answering.
    broken = data.with_name("broken.json")
    broken.write_text("[{")
    os.replace(broken, data)
    assert session.get(f"{base}/api/prints/serial/greater/0").text == "1"
    assert "not valid JSON" in session.get(f"{base}/health").json()["last_error"]

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 0
    stderr = process.stderr.read()
    assert f"on {base}" in stderr and "not valid JSON" in stderr and "printq stopped" in stderr
