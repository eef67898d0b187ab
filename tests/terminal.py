"""Run the real CLI with its stdout on a pseudo-terminal, as a person at a terminal sees it.

The commands decide for themselves that stdout is a terminal (rich tables, panels, colours),
so the tests exercise the terminal rendering without knowing where that decision is made.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@dataclass
class TerminalRun:
    exit_code: int
    screen: str  # stdout as shown, escape sequences removed, \r\n as \n
    raw: str     # stdout with its escape sequences
    stderr: str


def run_on_terminal(*args: str, env: dict | None = None, columns: int = 200,
                    timeout: float = 60) -> TerminalRun:
    """`python -m obsctl ARGS` with stdout on a pty of `columns` columns."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith("OBSCTL_") and k not in ("NO_COLOR", "COLUMNS", "LINES", "TERM")}
    full_env.update({"TERM": "xterm-256color", **(env or {})})
    process = subprocess.Popen([sys.executable, "-m", "obsctl", *args], stdin=subprocess.DEVNULL,
                               stdout=slave, stderr=subprocess.PIPE, env=full_env)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif process.poll() is not None:
                break
        else:
            process.kill()
            raise AssertionError(f"obsctl {' '.join(args)} did not finish in {timeout} s")
        stderr = process.communicate(timeout=timeout)[1].decode(errors="replace")
    finally:
        os.close(master)
    raw = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    return TerminalRun(process.returncode, _ANSI.sub("", raw), raw, stderr)
