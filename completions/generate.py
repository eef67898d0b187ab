"""Generate the shell completion scripts for obsctl and printq (run by `make completions`).

The scripts come from the installed commands themselves (Typer's completion support), so
they cannot drift from the real options; tests/obsctl/test_cli_help.py checks they are current.

    python completions/generate.py [OUTPUT_DIR]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PROGRAMS = ("obsctl", "printq")
SHELLS = ("bash", "zsh", "fish")


def render(program: str, shell: str) -> str:
    exe = shutil.which(program, path=str(Path(sys.executable).parent)) or program
    env = dict(os.environ, **{f"_{program.upper()}_COMPLETE": f"source_{shell}"})
    result = subprocess.run([exe], env=env, capture_output=True, text=True, check=True)
    return result.stdout


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for program in PROGRAMS:
        for shell in SHELLS:
            path = out_dir / f"{program}.{shell}"
            path.write_text(render(program, shell))
            print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
