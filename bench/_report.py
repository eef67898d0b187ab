"""What every benchmark shares: targets judged on medians, PASS/MISS lines, an exit status,
and a Markdown section of the run's figures for the performance page.

A benchmark builds one `Report`, prints its figures through `figure()`, judges each target
with `check()` (always on a median of repeated runs, never on the best one) and ends with
`finish()`, which exits 1 when any target was missed. With `BENCH_REPORT=path` (or a
benchmark's `--report path`) `finish()` appends the run's section to that file; `make bench`
uses it to write docs/performance.md from one run.

`BENCH_SMALL=1` makes every benchmark use small sizes (and a small shared database), to
check the mechanism quickly; its figures say nothing about performance.

    python bench/_report.py header     # the page's header: when, on what machine, which commit
    python bench/_report.py footer F   # the page's closing lines; F lists benchmarks that failed
"""

from __future__ import annotations

import operator
import os
import platform
import shlex
import sqlite3
import statistics
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL = os.environ.get("BENCH_SMALL", "") not in ("", "0")
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def sized(full, small):
    """The default for a size option: `full` normally, `small` under BENCH_SMALL=1."""
    return small if SMALL else full


def timed(fn, iterations: int) -> list[float]:
    """Milliseconds of each of `iterations` calls of `fn`, after one warm-up call (page cache,
    statements and query plans, lazy imports)."""
    import time

    fn()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def median(samples) -> float:
    return statistics.median(samples)


@dataclass
class Check:
    name: str
    value: float
    op: str
    target: float
    unit: str
    basis: str

    @property
    def passed(self) -> bool:
        return _COMPARE[self.op](self.value, self.target)

    def describe(self, fmt: str) -> str:
        return (f"{self.name}: {self.value:{fmt}}{self.unit} ({self.basis}), "
                f"target {self.op} {self.target:{fmt}}{self.unit}")


class Report:
    """The figures and verdicts of one benchmark run."""

    def __init__(self, title: str, argv: list[str] | None = None):
        self.title = title
        self.argv = sys.argv if argv is None else argv
        self.lines: list[str] = []
        self.checks: list[tuple[Check, str]] = []

    def figure(self, text: str = "") -> None:
        """Print a line of figures; it also goes, verbatim, into the Markdown section."""
        print(text, flush=True)
        self.lines.append(text)

    def check(self, name: str, value: float, op: str, target: float, *, unit: str = "",
              basis: str = "median", fmt: str = ".1f") -> bool:
        """Judge `value op target` and print a PASS or MISS line; True when the target is met."""
        check = Check(name, value, op, target, unit, basis)
        self.checks.append((check, fmt))
        line = f"{'PASS' if check.passed else 'MISS'} {check.describe(fmt)}"
        print(line, flush=True)
        return check.passed

    @property
    def missed(self) -> list[Check]:
        return [c for c, _ in self.checks if not c.passed]

    def markdown(self) -> str:
        command = " ".join(shlex.quote(a) for a in ["python", _relative(self.argv[0]), *self.argv[1:]])
        out = [f"## {self.title}", "", f"`{command}`{' (BENCH_SMALL=1)' if SMALL else ''}", ""]
        if self.checks:
            out += ["| target | measured | verdict |", "|---|---|---|"]
            for check, fmt in self.checks:
                out.append(f"| {check.name} {check.op} {check.target:{fmt}}{check.unit} "
                           f"| {check.value:{fmt}}{check.unit} ({check.basis}) "
                           f"| {'PASS' if check.passed else 'MISS'} |")
            out.append("")
        out += ["```", *self.lines, "```", ""]
        return "\n".join(out) + "\n"

    def finish(self, report_path: str | None = None) -> None:
        """Append the Markdown section (BENCH_REPORT or `report_path`), then exit 1 on a miss."""
        path = report_path or os.environ.get("BENCH_REPORT")
        if path:
            with open(path, "a", encoding="utf-8") as out:
                out.write(self.markdown())
        missed = self.missed
        if missed:
            print(f"{self.title}: {len(missed)} of {len(self.checks)} targets missed", file=sys.stderr)
            raise SystemExit(1)
        print(f"{self.title}: all {len(self.checks)} targets met", file=sys.stderr)


def _relative(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return path


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": f"{cpu}, {os.cpu_count()} logical CPUs",
        "memory": memory,
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "commit": commit + (" (with uncommitted changes)" if dirty else ""),
    }


def header() -> str:
    m = machine()
    lines = [
        "# Performance", "",
        "Written by `make bench` from one run of every benchmark in `bench/`; do not edit by hand.",
        "Each target is judged on the median of repeated runs; a benchmark that misses one exits",
        "non-zero. Every figure below is printed by the benchmark named in its section.", "",
        f"- run: {m['date']}, commit {m['commit']}",
        f"- machine: {m['cpu']}, {m['memory']} memory, {m['os']}",
        f"- Python {m['python']}, SQLite {m['sqlite']}",
    ]
    if SMALL:
        lines.append("- **BENCH_SMALL=1**: small sizes that check the mechanism; the figures say "
                     "nothing about performance")
    return "\n".join(lines) + "\n\n"


def footer(failed: list[str]) -> str:
    if not failed:
        return "Every benchmark met its targets in this run.\n"
    return ("Benchmarks that missed a target or failed in this run: "
            + ", ".join(f"`{f}`" for f in failed) + ".\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["header"]:
        sys.stdout.write(header())
    elif sys.argv[1:2] == ["footer"]:
        sys.stdout.write(footer(" ".join(sys.argv[2:]).split()))
    else:
        raise SystemExit(__doc__)
