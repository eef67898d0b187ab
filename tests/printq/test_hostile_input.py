"""printq against hostile input: huge numbers, FIFOs, /dev/zero, directories, oversized files.

Everything that could hang runs with a timeout (a subprocess, a thread that is unblocked, a
request with a deadline), so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from printq.cli import main
from printq.dataset import Dataset
from printq.errors import DataUnavailable, InvalidSetting
from printq.queries import MAX_NUMBER_CHARS
from printq.settings import DEFAULT_MAX_DATA_BYTES, Settings, load_settings
from printq.web import create_app

DATA = Path(__file__).parent.parent / "data"
SMALL = DATA / "printq-small.json"
PRINTQ = Path(sys.executable).with_name("printq")
HUGE = "9" * 5000  # more digits than Python will convert to an int


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PRINTQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PRINTQ_DATA", raising=False)
    monkeypatch.delenv("PRINTQ_MAX_DATA_BYTES", raising=False)


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "prints.fifo"
    os.mkfifo(path)
    return path


def run_printq(*args: str, env: dict | None = None, timeout: float = 20) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in ("PRINTQ_DATA", "PRINTQ_MAX_DATA_BYTES")}
    full_env.update(env or {})
    return subprocess.run([str(PRINTQ), *args], capture_output=True, text=True, timeout=timeout, env=full_env)


def snapshot_within(dataset: Dataset, seconds: float, fifo: Path | None = None):
    """``dataset.snapshot()`` in a thread: its result or exception, or a failure after ``seconds``."""
    outcome: dict = {}

    def target():
        try:
            outcome["result"] = dataset.snapshot()
        except Exception as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        if fifo is not None:  # a reader blocked in open(): a writer lets it go, so the test ends
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"Dataset.snapshot() still blocked after {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


# --- numbers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [HUGE, "-" + HUGE, "0." + "0" * 5000 + "1", "1" * (MAX_NUMBER_CHARS + 1)])
def test_a_number_longer_than_the_limit_is_an_invalid_query_not_a_traceback(capsys, value):
    code = main(["serial", "greater", value, "--data", str(SMALL)])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: Value '{value[:40]}... ({len(value)} characters)' is too long: "
                          f"a number may have at most {MAX_NUMBER_CHARS} characters.")
    assert err.count("\n") == 1


def test_a_number_of_exactly_the_limit_is_still_answered(capsys):
    value = "1" + "0" * (MAX_NUMBER_CHARS - 1)
    assert main(["serial", "lesser", value, "--data", str(SMALL)]) == 0
    assert capsys.readouterr().out == "4\n"


def test_the_console_script_prints_no_traceback_for_a_5000_digit_value():
    result = run_printq("serial", "greater", HUGE, "--data", str(SMALL))
    assert (result.returncode, result.stdout) == (1, "")
    assert "Traceback" not in result.stderr and "too long" in result.stderr


@pytest.mark.parametrize("value", [HUGE, "-" + HUGE])
def test_http_answers_400_with_a_message_for_a_5000_digit_value(tmp_path, value):
    client = create_app(Settings(str(SMALL), None)).test_client()
    response = client.get(f"/api/prints/serial/greater/{value}")
    assert response.status_code == 400
    assert "is too long: a number may have at most 400 characters" in response.get_json()["Message"]


def test_an_overlong_metric_name_is_shortened_in_the_message(capsys):
    assert main(["x" * 10_000, "greater", "5", "--data", str(SMALL)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error: Unknown metric '{'x' * 40}... (10000 characters)'. Valid metrics:")
    assert len(err) < 300


# --- files that are not regular files -----------------------------------------------------------


def test_dataset_refuses_a_fifo_without_blocking(fifo):
    with pytest.raises(DataUnavailable) as info:
        snapshot_within(Dataset(fifo), 10, fifo)
    assert info.value.message == f"Cannot read data file {fifo}: it is a named pipe (FIFO), not a regular file."


def test_dataset_refuses_dev_zero_without_reading_it():
    with pytest.raises(DataUnavailable) as info:
        snapshot_within(Dataset("/dev/zero"), 10)
    assert info.value.message == "Cannot read data file /dev/zero: it is a character device, not a regular file."


def test_dataset_refuses_a_directory(tmp_path):
    with pytest.raises(DataUnavailable) as info:
        Dataset(tmp_path).snapshot()
    assert info.value.message == f"Cannot read data file {tmp_path}: it is a directory, not a regular file."


def test_a_symlink_to_dev_zero_is_refused_too(tmp_path):
    link = tmp_path / "prints.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(DataUnavailable, match="it is a character device, not a regular file"):
        snapshot_within(Dataset(link), 10)


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "directory"])
def test_the_cli_exits_2_with_a_message_instead_of_hanging(fifo, tmp_path, kind):
    path = {"fifo": str(fifo), "/dev/zero": "/dev/zero", "directory": str(tmp_path)}[kind]
    result = run_printq("livePercent", "greater", "50", "--data", path, timeout=20)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"Error: Cannot read data file {path}: it is ")
    assert result.stderr.rstrip().endswith("not a regular file.")


def test_metrics_command_refuses_a_fifo_too(fifo):
    result = run_printq("metrics", "--data", str(fifo), timeout=20)
    assert result.returncode == 2
    assert "named pipe (FIFO), not a regular file" in result.stderr


def test_a_fifo_in_the_cache_directory_is_a_cache_miss_not_a_hang(tmp_path):
    from printq.index_cache import index_path

    data = tmp_path / "prints.json"
    shutil.copy(SMALL, data)
    cache = tmp_path / "cache"
    cache.mkdir()
    os.mkfifo(index_path(str(cache), str(data)))
    snapshot = snapshot_within(Dataset(data, cache), 10, Path(index_path(str(cache), str(data))))
    assert snapshot.records == 4


# --- the byte limit ------------------------------------------------------------------------------


def test_the_byte_limit_defaults_to_1_gib_and_is_configurable():
    assert load_settings(environ={}).max_data_bytes == DEFAULT_MAX_DATA_BYTES == 1 << 30
    assert load_settings(environ={"PRINTQ_MAX_DATA_BYTES": "2048"}).max_data_bytes == 2048


@pytest.mark.parametrize("raw", ["0", "-5", "1e9", "12kb", " 100", "1_000", "9" * 30])
def test_a_bad_byte_limit_is_refused(raw):
    with pytest.raises(InvalidSetting, match="PRINTQ_MAX_DATA_BYTES must be a positive whole number"):
        load_settings(environ={"PRINTQ_MAX_DATA_BYTES": raw})


def test_the_cli_applies_the_byte_limit_from_the_environment():
    limit = SMALL.stat().st_size - 1
    result = run_printq("serial", "greater", "0", "--data", str(SMALL), env={"PRINTQ_MAX_DATA_BYTES": str(limit)})
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"Error: Cannot load data file {SMALL}: it is {limit + 1} bytes, over the limit "
                             f"of {limit} bytes (PRINTQ_MAX_DATA_BYTES sets the limit).\n")
    bad = run_printq("serial", "greater", "0", env={"PRINTQ_MAX_DATA_BYTES": "lots"})
    assert (bad.returncode, bad.stderr) == (
        2, "Error: PRINTQ_MAX_DATA_BYTES must be a positive whole number of bytes, such as 2147483648; "
           "got 'lots'.\n")


def test_the_http_app_applies_the_byte_limit(tmp_path):
    settings = Settings(str(SMALL), None, max_data_bytes=SMALL.stat().st_size - 1)
    response = create_app(settings).test_client().get("/api/prints/serial/greater/0")
    assert response.status_code == 503
    assert "over the limit" in response.get_json()["Message"]


# --- a real server -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def serve(tmp_path):
    """Start ``printq serve --data PATH``; returns the base URL once it answers /health at all."""
    processes = []

    def start(data: Path | str) -> str:
        port = free_port()
        env = {**os.environ, "PRINTQ_CACHE_DIR": str(tmp_path / "cache")}
        process = subprocess.Popen([str(PRINTQ), "serve", "--port", str(port), "--data", str(data)],
                                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        processes.append(process)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                requests.get(f"{base}/health", timeout=2)
                return base
            except requests.RequestException:
                if process.poll() is not None:
                    break
                time.sleep(0.05)
        process.kill()
        pytest.fail(f"printq serve --data {data} did not answer: {process.communicate()[1]}")

    yield start
    for process in processes:
        process.kill()
        process.wait()


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_the_server_answers_503_and_health_keeps_answering(serve, fifo, kind):
    base = serve(fifo if kind == "fifo" else "/dev/zero")
    for _ in range(3):  # every request gets an answer, none waits on the file
        query = requests.get(f"{base}/api/prints/livePercent/greater/50", timeout=5)
        assert query.status_code == 503
        assert "not a regular file" in query.json()["Message"]
        health = requests.get(f"{base}/health", timeout=5)
        assert health.status_code == 503 and health.json()["status"] == "unavailable"


def test_a_fifo_replacing_the_file_keeps_the_last_good_data(serve, tmp_path):
    data = tmp_path / "prints.json"
    shutil.copy(SMALL, data)
    base = serve(data)
    assert requests.get(f"{base}/api/prints/serial/greater/0", timeout=5).json() == 4
    pipe = tmp_path / "new.fifo"
    os.mkfifo(pipe)
    os.replace(pipe, data)
    assert requests.get(f"{base}/api/prints/serial/greater/0", timeout=5).json() == 4
    health = requests.get(f"{base}/health", timeout=5).json()
    assert health["status"] == "ok" and "named pipe (FIFO)" in health["last_error"]


def test_the_server_bounds_numbers_too(serve):
    base = serve(SMALL)
    response = requests.get(f"{base}/api/prints/serial/greater/{HUGE}", timeout=5)
    assert response.status_code == 400
    assert json.loads(response.text)["Message"].endswith("a number may have at most 400 characters.")
