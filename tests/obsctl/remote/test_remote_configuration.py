"""`obsctl apply` and `obsctl export-config` through a server print what they print on the
database; the file's environment variables are read on the client, and what is applied
through the server is in the database."""

from __future__ import annotations

import base64

import pytest

from tests.store_support import open_any

SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
ENV = {"REMOTE_HOOK_SECRET": SECRET}
FILE = """\
alerts:
  - name: remote errors
    metric: error_rate
    operator: gt
    threshold: 10
webhooks:
  - webhook_id: wh_remote
    url: https://hooks.example.com/remote
    secret_env: REMOTE_HOOK_SECRET
    rules: [remote errors]
sla:
  - agent_name: support-bot
    metric: error_rate
    operator: le
    target_value: 5
"""


@pytest.fixture
def config_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the file is named the same way in both runs' messages

    def write(text: str) -> str:
        (tmp_path / "obsctl.yaml").write_text(text)
        return "obsctl.yaml"

    return write


def _same(remote, *args: str, env: dict | None = None):
    here, there = remote.local(*args, env=env), remote.remote(*args, env=env)
    assert (there.exit_code, there.stdout, there.stderr) == (here.exit_code, here.stdout, here.stderr), args
    return here


@pytest.mark.parametrize("extra", [(), ("--json",), ("--prune",), ("--prune", "--json", "--exit-code")])
def test_a_dry_run_prints_the_same(remote, config_file, extra):
    result = _same(remote, "apply", "-f", config_file(FILE), "--dry-run", *extra, env=ENV)
    assert "create" in result.stdout


@pytest.mark.parametrize("text", [
    FILE.replace("threshold: 10", "threshold: ten"),
    FILE.replace("rules: [remote errors]", "rules: [nope]").replace("metric: error_rate\n    operator: le", "metric: x\n    operator: le"),
    FILE.replace("secret_env: REMOTE_HOOK_SECRET", "secret_env: REMOTE_UNSET"),
    "alerts: [\n",
])
def test_problems_print_the_same(remote, config_file, text):
    result = _same(remote, "apply", "-f", config_file(text), env=ENV)
    assert result.exit_code == 1 and result.stderr.startswith("Error: ")


def test_apply_through_the_server_reads_the_secret_here_and_changes_the_database(remote, config_file):
    applied = remote.remote("apply", "-f", config_file(FILE), env=ENV)
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines()[-1].startswith("Applied: 3 created")
    store = open_any(remote.db_url)
    try:
        assert store.webhooks.get_webhook("wh_remote")["secret"] == SECRET
    finally:
        store.close()
    # Applied: both ways now say nothing changes, and export the same document.
    again = _same(remote, "apply", "-f", "obsctl.yaml", "--exit-code", env=ENV)
    assert again.stdout.splitlines()[-1] == "No changes: 3 objects already as the file says."
    for args in (("export-config",), ("export-config", "--json")):
        exported = _same(remote, *args)
        assert SECRET not in exported.stdout and "wh_remote" in exported.stdout
    exported_file = "exported.yaml"
    assert remote.remote("export-config", "-o", exported_file).exit_code == 0
    check = _same(remote, "apply", "-f", exported_file, "--dry-run", "--exit-code", env={})
    assert check.exit_code == 0 and check.stdout.splitlines()[-1].startswith("Dry run: no changes")
