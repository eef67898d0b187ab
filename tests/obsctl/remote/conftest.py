"""Remote mode against a real `obsctl serve`: the same command run with --db and with --url
must print the same bytes and exit with the same code.

`remote` (one per module and backend) is a database holding the demo data (examples/
generate_demo.py, at a fixed clock) and a real server over it on 127.0.0.1. `same(*args)`
runs the command both ways, in-process, and returns the local result after asserting that
stdout, stderr and the exit code agree; fields that say when a document was made
(`compared_at`, `exported_at`, ...) are the only difference allowed, and `volatile` names them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests import backends
from tests.conftest import _require, start_server

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Remote:
    db_url: str
    url: str
    server: object

    def local(self, *args: str, input: str | None = None, env: dict | None = None):
        return _invoke(["--db", self.db_url, *args], input, env)

    def remote(self, *args: str, input: str | None = None, env: dict | None = None):
        return _invoke(["--url", self.url, *args], input, env)

    def same(self, *args: str, volatile: tuple[str, ...] = (), input: str | None = None):
        """Run `args` both ways; assert the same exit code, stdout and stderr (up to the
        `volatile` JSON fields' values); return the local result."""
        here, there = self.local(*args, input=input), self.remote(*args, input=input)
        assert there.exit_code == here.exit_code, (args, here.output, there.output)
        assert _masked(there.stdout_bytes, volatile) == _masked(here.stdout_bytes, volatile), args
        assert there.stderr == here.stderr, args
        return here


def _masked(data: bytes, volatile: tuple[str, ...]) -> bytes:
    for name in volatile:  # a string or a number
        data = re.sub(rb'("' + name.encode() + rb'": ?)("[^"]*"|-?[0-9][0-9.eE+-]*)', rb'\1"*"', data)
    return data


def _invoke(args: list[str], input: str | None, env: dict | None):
    from obsctl.cli.main import app

    return CliRunner().invoke(app, args, input=input, env=env, catch_exceptions=False)


@pytest.fixture(scope="module", params=backends.BACKENDS)
def remote(request, tmp_path_factory):
    name = request.param
    schema = None
    if name == "postgresql":
        _require("PostgreSQL", backends.unavailable_reason())
        schema, db_url = backends.new_schema()
    else:
        db_url = str(tmp_path_factory.mktemp("remote") / "obsctl.db")
    tmp = tmp_path_factory.mktemp("remote-serve")
    events = tmp / "events.jsonl"
    events.write_bytes(subprocess.run([sys.executable, str(ROOT / "examples" / "generate_demo.py"), "--now"],
                                      check=True, capture_output=True).stdout)
    loaded = _invoke(["--db", db_url, "ingest", str(events)], None, None)
    assert loaded.exit_code == 0, loaded.output
    server = start_server(db_url, tmp, {"OBSCTL_RATE_LIMITS": "off"})
    try:
        yield Remote(db_url, server.url, server)
    finally:
        server.stop()
        if schema:
            backends.drop_schema(schema)
