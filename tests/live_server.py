"""A real `obsctl serve` on 127.0.0.1 for tests and benchmarks: started as a subprocess on a
free port, waited for until /health answers, stopped with a signal. Nothing here needs pytest,
so the benchmarks (bench/) run from the project's own install."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

# Settings a server must not inherit from the environment that runs the tests (each test or
# benchmark gives its own).
_ENV_VARS = ("OBSCTL_DB", "OBSCTL_DATABASE_URL", "SERVICE_API_KEY", "CORS_ORIGINS", "OBSCTL_RATE_LIMITS", "PORT",
             "OBSCTL_MAX_BATCH", "OBSCTL_MAX_BODY_BYTES", "OBSCTL_PRICES",
             "OBSCTL_WEBHOOK_ALLOW_PRIVATE", "OBSCTL_RATELIMIT_STORAGE_URI", "OBSCTL_MAX_FUTURE_SKEW",
             "OBSCTL_CONNECTION_LIMIT", "OBSCTL_IDLE_TIMEOUT", "OBSCTL_HEADER_TIMEOUT",
             "OBSCTL_WRITE_QUEUE", "OBSCTL_WRITE_TIMEOUT", "OBSCTL_URL", "OBSCTL_API_KEY",
             "OBSCTL_OTLP_GRPC_PORT", "OBSCTL_MAX_STREAMS", "OBSCTL_PROFILE", "OBSCTL_CONFIG",
             "OBSCTL_AUTH_FAILURE_LIMIT",
             "OBSCTL_TRUSTED_PROXIES", "OBSCTL_CONNECTIONS_PER_ADDRESS", "OBSCTL_BODY_TIMEOUT",
             "OBSCTL_BODY_MIN_RATE", "OBSCTL_MAX_SPANS", "OBSCTL_GRPC_MAX_MESSAGE_BYTES")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    def __init__(self, process: subprocess.Popen, port: int, log_path: Path):
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, sig=None, timeout: float = 20) -> int:
        import signal

        if self.process.poll() is None:
            self.process.send_signal(sig or signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def start_server(db_path: Path | str, tmp_path: Path, env: dict | None = None, threads: int = 4,
                 wait: float = 30.0, healthy: bool = True, args: tuple[str, ...] = ()) -> LiveServer:
    """Start `obsctl serve` as a real subprocess on a free 127.0.0.1 port and wait for /health;
    `args` are further `serve` options."""
    port = free_port()
    full_env = {k: v for k, v in os.environ.items() if k not in _ENV_VARS}
    full_env.update(env or {})
    log_path = tmp_path / f"serve-{port}.log"
    log = open(log_path, "wb")  # noqa: SIM115 (owned by the child process)
    process = subprocess.Popen(
        [sys.executable, "-m", "obsctl", "--db", str(db_path), "serve", "--host", "127.0.0.1",
         "--port", str(port), "--threads", str(threads), *args],
        stdout=log, stderr=subprocess.STDOUT, env=full_env,
    )
    server = LiveServer(process, port, log_path)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"obsctl serve exited early:\n{server.log()}")
        try:
            status = requests.get(f"{server.url}/health", timeout=5).status_code
            if status == 200 or not healthy:
                return server
        except requests.RequestException:
            time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"obsctl serve did not start:\n{server.log()}")
