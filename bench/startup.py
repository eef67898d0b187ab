"""Benchmark start-up: what a shell completion, a cron job or a quick question pays per call.

    .venv/bin/python bench/startup.py [--runs 21]

Wall time of each command below, one fresh process per run, against a bare `python -c pass`
of the same interpreter measured in the same run (interleaved in a seeded random order, so a
busy moment costs both alike). Figures are medians; the ratio to the bare interpreter is what
is judged, as it moves less than milliseconds on a shared machine.

Targets: `obsctl --help` and `printq livePercent greater 50` within 6x of `python -c pass`.
Reported beside them, not judged: `obsctl sessions --help` and `obsctl alerts --help` (a
command group imports its own services), and the modules `import obsctl.cli.main` loads.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import Report, sized  # noqa: E402

BIN = Path(sys.executable).parent
SEED = 20261129
JUDGED = {"obsctl --help": [str(BIN / "obsctl"), "--help"],
          "printq livePercent greater 50": [str(BIN / "printq"), "livePercent", "greater", "50"]}
REPORTED = {"obsctl sessions --help": [str(BIN / "obsctl"), "sessions", "--help"],
            "obsctl alerts --help": [str(BIN / "obsctl"), "alerts", "--help"]}
BARE = "python -c pass"


def run_once(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=sized(21, 5))
    parser.add_argument("--report")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OBSCTL_", "_OBSCTL"))}
    commands = {BARE: [sys.executable, "-c", "pass"], **JUDGED, **REPORTED}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for cmd in commands.values():  # warm the page cache and the bytecode
        run_once(cmd, env)
    order = [name for name in commands for _ in range(args.runs)]
    random.Random(SEED).shuffle(order)
    for name in order:
        samples[name].append(run_once(commands[name], env))

    report = Report("Start-up")
    bare = statistics.median(samples[BARE])
    report.figure(f"{BARE}: {bare * 1000:.1f} ms (median of {args.runs})")
    for name in [*JUDGED, *REPORTED]:
        value = statistics.median(samples[name])
        report.figure(f"{name}: {value * 1000:.1f} ms = {value / bare:.1f}x {BARE}")
    imported = subprocess.run(
        [sys.executable, "-c", "import sys, obsctl.cli.main; "
         "print(sum(1 for m in sys.modules if m.startswith('obsctl')))"],
        capture_output=True, text=True, env=env, check=True).stdout.strip()
    report.figure(f"obsctl modules imported by `import obsctl.cli.main`: {imported}")
    for name in JUDGED:
        report.check(f"{name} / {BARE}", statistics.median(samples[name]) / bare, "<=", 6, unit="x")
    report.finish(args.report)


if __name__ == "__main__":
    main()
