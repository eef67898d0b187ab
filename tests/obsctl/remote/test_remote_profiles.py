"""Choosing the server: --url, $OBSCTL_URL, --profile from the config file, and the API key
from $OBSCTL_API_KEY, --api-key-file or the profile (owner-only files, never printed)."""

from __future__ import annotations

import pytest

from tests.conftest import start_server
from tests.obsctl.remote.conftest import _invoke

KEY = "k3y-for-tests-0123456789"


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    """A server that wants X-API-Key."""
    tmp = tmp_path_factory.mktemp("keyed")
    server = start_server(tmp / "keyed.db", tmp, {"OBSCTL_RATE_LIMITS": "off", "SERVICE_API_KEY": KEY})
    yield server
    server.stop()


def _private(path, text: str, mode: int = 0o600):
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_key_from_the_environment_is_sent(keyed):
    assert _invoke(["--url", keyed.url, "sessions", "list", "--json"], None,
                   {"OBSCTL_API_KEY": KEY}).exit_code == 0


def test_a_missing_or_wrong_key_is_one_line_without_the_key(keyed):
    missing = _invoke(["--url", keyed.url, "sessions", "list"], None, None)
    wrong = _invoke(["--url", keyed.url, "sessions", "list"], None, {"OBSCTL_API_KEY": "nope-" + KEY})
    for result in (missing, wrong):
        assert result.exit_code == 1 and result.stderr.count("\n") == 1
        assert "API key" in result.stderr and KEY not in result.stderr


def test_the_key_file_must_be_private(keyed, tmp_path):
    key_file = _private(tmp_path / "key", KEY + "\n")
    assert _invoke(["--url", keyed.url, "--api-key-file", str(key_file), "analytics", "--json"], None,
                   None).exit_code == 0
    key_file.chmod(0o644)
    result = _invoke(["--url", keyed.url, "--api-key-file", str(key_file), "analytics"], None, None)
    assert result.exit_code == 2 and "permissions 0644" in result.stderr and "chmod 600" in result.stderr
    assert KEY not in result.output


def test_a_profile_names_the_server_and_its_key(keyed, tmp_path):
    _private(tmp_path / "prod.key", KEY)
    config = _private(tmp_path / "config.toml",
                      f'[profiles.prod]\nurl = "{keyed.url}"\napi_key_file = "prod.key"\n\n'
                      f'[profiles.inline]\nurl = "{keyed.url}"\napi_key = "{KEY}"\n')
    env = {"OBSCTL_CONFIG": str(config)}
    for name in ("prod", "inline"):
        result = _invoke(["--profile", name, "sessions", "list", "--json"], None, env)
        assert result.exit_code == 0, result.output
    assert _invoke(["sessions", "list", "--json"], None, {**env, "OBSCTL_PROFILE": "prod"}).exit_code == 0


def test_a_config_file_holding_a_key_must_be_private(keyed, tmp_path):
    config = _private(tmp_path / "config.toml", f'[profiles.p]\nurl = "{keyed.url}"\napi_key = "{KEY}"\n',
                      mode=0o644)
    result = _invoke(["--profile", "p", "sessions", "list"], None, {"OBSCTL_CONFIG": str(config)})
    assert result.exit_code == 2 and "too open" in result.stderr and KEY not in result.output


@pytest.mark.parametrize(("text", "message"), [
    (None, "there is no config file at"),
    ("[profiles.other]\nurl = 'http://127.0.0.1:9'\n", "no profile 'prod' in"),
    ("[profiles.prod]\nurl = 'http://127.0.0.1:9'\ncolour = 'red'\n", "unknown setting 'colour'"),
    ("[profiles.prod]\napi_key_file = 'k'\n", "needs url ="),
    ("[profiles.prod\n", "is not valid TOML"),
])
def test_config_mistakes_are_named(tmp_path, text, message):
    config = tmp_path / "config.toml"
    if text is not None:
        _private(config, text)
    result = _invoke(["--profile", "prod", "sessions", "list"], None, {"OBSCTL_CONFIG": str(config)})
    assert result.exit_code == 2 and message in result.stderr


def test_url_on_the_command_line_wins_over_the_database_in_the_environment(remote):
    result = _invoke(["--url", remote.url, "sessions", "list", "--json"], None, {"OBSCTL_DB": "/nonexistent/x.db"})
    assert result.exit_code == 0


def test_db_and_url_together_are_a_usage_error(remote, tmp_path):
    result = _invoke(["--db", str(tmp_path / "x.db"), "--url", remote.url, "sessions", "list"], None, None)
    assert result.exit_code == 2 and "cannot be combined" in result.stderr


@pytest.mark.parametrize("args", [("serve",), ("db", "backup", "x.db"), ("db", "copy", "a.db", "b.db")])
def test_commands_that_work_on_a_database_refuse_a_server(remote, args, tmp_path):
    default_db = tmp_path / "xdg-data" / "obsctl" / "obsctl.db"
    result = _invoke(["--url", remote.url, *args], None, None)
    assert result.exit_code == 2 and "cannot run against a server" in result.stderr
    assert not default_db.exists()  # nothing fell back to the local default database
