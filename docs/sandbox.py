"""The sandbox the docs' examples run in (used by docs/generate.py).

A directory holding a copy of the demo database, examples/obsctl.yaml and the files of
docs/examples/, with `obsctl` and `printq` on PATH as wrappers that run with the clock fixed at
FIXED_NOW, so every example prints the same output on every machine and every day.
"""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
EXAMPLE_FILES = DOCS / "examples"
DEMO_EVENTS = ROOT / "examples" / "demo-events.jsonl"
CONFIG_EXAMPLE = ROOT / "examples" / "obsctl.yaml"  # docs/configuration-as-code.md applies it
FIXED_NOW = "2026-11-20T20:05:00.000Z"  # five minutes after the demo's last event, as `make demo`
WIDTH = 100
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


class Sandbox:
    """A directory with the demo database, the example files and `obsctl`/`printq` on PATH that
    run with the clock fixed at FIXED_NOW."""

    def __init__(self, template: Path):
        self.dir = Path(tempfile.mkdtemp(prefix="obsctl-docs-"))
        self.work = self.dir / "demo"
        shutil.copytree(template, self.work)
        self.bin = template.parent / "bin"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OBSCTL_", "PRINTQ_", "SERVICE_API_KEY"))}
        env.update(PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}", OBSCTL_DB=".demo/obsctl.db",
                   HOME=str(self.dir), XDG_DATA_HOME=str(self.dir / "data"), PRINTQ_CACHE_DIR=str(self.dir / "cache"),
                   DOCS_FIXED_NOW=FIXED_NOW, PYTHONUNBUFFERED="1", COLUMNS=str(WIDTH), LINES="50",
                   NO_COLOR="1", TERM="xterm", LC_ALL="C.UTF-8", PYTHONIOENCODING="utf-8")
        return env

    def run(self, command: str, tty: bool) -> list[str]:
        if tty:
            code, out = self._run_tty(command)
        else:
            proc = subprocess.run(["bash", "-c", command], cwd=self.work, env=self.env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=120)
            code, out = proc.returncode, proc.stdout.decode("utf-8", "replace")
        out = ANSI.sub("", out).replace(str(self.work), "/home/me/demo").replace(str(self.dir), "/home/me")
        out = out.replace(str(ROOT), "/home/me/obsctl")  # the checkout differs from one clone to the next
        lines = [line.rstrip() for line in out.rstrip("\n").split("\n")] if out.strip() else []
        return [*lines, f"[exit {code}]"] if code else lines

    def _run_tty(self, command: str) -> tuple[int, str]:
        import fcntl
        import struct
        import termios

        primary, secondary = pty.openpty()
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 50, WIDTH, 0, 0))
        proc = subprocess.Popen(["bash", "-c", command], cwd=self.work, env=self.env(), stdin=subprocess.DEVNULL,
                                stdout=secondary, stderr=subprocess.PIPE)
        os.close(secondary)
        chunks = []
        while True:
            ready, _, _ = select.select([primary], [], [], 120)
            if not ready:
                proc.kill()
                raise RuntimeError(f"timed out: {command}")
            try:
                data = os.read(primary, 65536)
            except OSError:  # the terminal closes when the command exits
                break
            if not data:
                break
            chunks.append(data)
        os.close(primary)
        err = proc.stderr.read()
        proc.wait()
        return proc.returncode, (b"".join(chunks) + err).decode("utf-8", "replace")

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


_WRAPPER = """#!{python}
import sys
sys.path.insert(0, {docs!r})
from sandbox import run_with_fixed_clock
run_with_fixed_clock({name!r})
"""


def run_with_fixed_clock(name: str) -> None:
    """Entry point of the sandbox's `obsctl`/`printq`: every clock read in obsctl goes through
    obsctl.timeutil, whose `datetime` is replaced by one whose now() is DOCS_FIXED_NOW."""
    from datetime import datetime

    import obsctl.timeutil as timeutil

    fixed = datetime.fromisoformat(os.environ["DOCS_FIXED_NOW"].replace("Z", "+00:00"))

    class FixedDatetime(datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed.astimezone(tz) if tz else fixed.replace(tzinfo=None)

    timeutil.datetime = FixedDatetime
    if name == "obsctl":
        from obsctl.cli.main import main
    else:
        from printq.cli import main
    sys.exit(main())


def build_template(root: Path) -> Path:
    """root/bin with the wrappers and root/template with the demo database and example files."""
    bin_dir, template = root / "bin", root / "template"
    bin_dir.mkdir(parents=True)
    for name in ("obsctl", "printq"):
        script = bin_dir / name
        script.write_text(_WRAPPER.format(python=sys.executable, docs=str(DOCS), name=name))
        script.chmod(0o755)
    (template / ".demo").mkdir(parents=True)
    shutil.copy(DEMO_EVENTS, template / "demo-events.jsonl")
    shutil.copy(CONFIG_EXAMPLE, template / CONFIG_EXAMPLE.name)
    if EXAMPLE_FILES.is_dir():
        for f in EXAMPLE_FILES.iterdir():
            shutil.copy(f, template / f.name)
    box = Sandbox.__new__(Sandbox)
    box.dir, box.work, box.bin = root, template, bin_dir
    lines = box.run("obsctl ingest demo-events.jsonl", tty=False)
    if lines[-1].startswith("[exit"):
        raise RuntimeError("building the demo database failed:\n" + "\n".join(lines))
    return template
