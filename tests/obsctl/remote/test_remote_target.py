"""One precedence rule for where a command works, and a key only ever sent to the URL it came
with: the command line wins over the environment, which wins over the config file's
profiles (docs/remote.md).

Three real HTTP servers on 127.0.0.1 stand for the URL of the command line (`cli`), of
$OBSCTL_URL (`env`) and of profile `t` (`profile`); each records the X-API-Key of every
request it gets (and refuses it, 401: only who got what matters here)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from obsctl.config import Settings
from obsctl.services.storage import open_store
from tests.obsctl.remote.conftest import _invoke

FILE_KEY, ENV_KEY, PROFILE_KEY = "key-from-file", "key-from-environment", "key-of-profile-t"


class Recorder:
    """An HTTP server recording (name, X-API-Key) for every request, answering 401."""

    def __init__(self, name: str, seen: list):
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append((recorder.name, self.headers.get("X-API-Key")))
                body = b'{"error": "recorded"}'
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.name = name
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def servers():
    seen: list = []
    recorders = {name: Recorder(name, seen) for name in ("cli", "env", "profile")}
    yield recorders, seen
    for recorder in recorders.values():
        recorder.stop()


@pytest.fixture
def place(servers, tmp_path):
    """Runs `obsctl ARGS sessions list --json` with ENV; returns (exit code, stderr, who got
    which key). CLI/ENV/PROFILE in ARGS and ENV stand for the servers' URLs, FILE for a key
    file, DB for a database (empty, existing), CONFIG for the config file (profile t with
    its key, profile nokey without one)."""
    recorders, seen = servers
    key_file = tmp_path / "key"
    key_file.write_text(FILE_KEY)
    key_file.chmod(0o600)
    db = tmp_path / "local.db"
    open_store(Settings.from_env({}, db_path=str(db)), mode="create").close()
    config = tmp_path / "config.toml"
    config.write_text(f'[profiles.t]\nurl = "{recorders["profile"].url}"\napi_key = "{PROFILE_KEY}"\n\n'
                      f'[profiles.nokey]\nurl = "{recorders["profile"].url}"\n')
    config.chmod(0o600)
    words = {"CLI": recorders["cli"].url, "ENV": recorders["env"].url, "FILE": str(key_file), "DB": str(db)}

    def run(args: tuple, env: dict):
        seen.clear()
        env = {"OBSCTL_CONFIG": str(config), **{k: words.get(v, v) for k, v in env.items()}}
        result = _invoke([words.get(a, a) for a in args] + ["sessions", "list", "--json"], None, env)
        return result.exit_code, result.stderr, sorted(set(seen))

    return run


URL, KEY = {"OBSCTL_URL": "ENV"}, {"OBSCTL_API_KEY": ENV_KEY}

# (command line, environment, who gets which key: [(server, key)], or "database" for the
# local database, or (2, part of the usage error))
CASES = {
    "--url alone": (("--url", "CLI"), {}, [("cli", None)]),
    "--url with $OBSCTL_API_KEY": (("--url", "CLI"), KEY, [("cli", ENV_KEY)]),
    "--url with --api-key-file over $OBSCTL_API_KEY": (("--url", "CLI", "--api-key-file", "FILE"), KEY,
                                                       [("cli", FILE_KEY)]),
    "$OBSCTL_URL with $OBSCTL_API_KEY": ((), {**URL, **KEY}, [("env", ENV_KEY)]),
    "$OBSCTL_URL with --api-key-file": (("--api-key-file", "FILE"), {**URL, **KEY}, [("env", FILE_KEY)]),
    "--url over $OBSCTL_URL": (("--url", "CLI"), {**URL, **KEY}, [("cli", ENV_KEY)]),
    "--profile over $OBSCTL_URL, with its own key": (("--profile", "t"), {**URL, **KEY},
                                                     [("profile", PROFILE_KEY)]),
    "--profile without a key gets none": (("--profile", "nokey"), {**URL, **KEY}, [("profile", None)]),
    "$OBSCTL_PROFILE with its own key": ((), {"OBSCTL_PROFILE": "t", **KEY}, [("profile", PROFILE_KEY)]),
    "--url over $OBSCTL_PROFILE, without the profile's key": (("--url", "CLI"), {"OBSCTL_PROFILE": "t"},
                                                              [("cli", None)]),
    "--db over $OBSCTL_URL": (("--db", "DB"), {**URL, **KEY}, "database"),
    "--db over $OBSCTL_PROFILE": (("--db", "DB"), {"OBSCTL_PROFILE": "t"}, "database"),
    "--url over $OBSCTL_DB": (("--url", "CLI"), {"OBSCTL_DB": "DB", **KEY}, [("cli", ENV_KEY)]),
    "--profile over $OBSCTL_DATABASE_URL": (("--profile", "t"), {"OBSCTL_DATABASE_URL": "DB"},
                                            [("profile", PROFILE_KEY)]),
    "$OBSCTL_DB": ((), {"OBSCTL_DB": "DB", **KEY}, "database"),
    "--db and --url": (("--db", "DB", "--url", "CLI"), {}, (2, "--db and --url cannot be combined")),
    "--url and --profile": (("--url", "CLI", "--profile", "t"), {},
                            (2, "--url and --profile cannot be combined")),
    "$OBSCTL_URL and $OBSCTL_PROFILE": ((), {**URL, "OBSCTL_PROFILE": "t"},
                                        (2, "$OBSCTL_URL and $OBSCTL_PROFILE cannot be combined")),
    "$OBSCTL_DB and $OBSCTL_URL": ((), {**URL, "OBSCTL_DB": "DB"},
                                   (2, "$OBSCTL_DB and $OBSCTL_URL cannot be combined")),
    "--api-key-file with a profile": (("--profile", "t", "--api-key-file", "FILE"), {},
                                      (2, "--api-key-file is the key for --url or $OBSCTL_URL")),
    "--api-key-file with --db": (("--db", "DB", "--api-key-file", "FILE"), URL,
                                 (2, "--api-key-file is the key for --url or $OBSCTL_URL")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_where_each_key_goes(place, case):
    args, env, expected = CASES[case]
    code, stderr, received = place(args, env)
    if expected == "database":
        assert (code, received) == (0, []), stderr
    elif isinstance(expected, tuple):
        assert (code, received) == (expected[0], []) and expected[1] in stderr, stderr
        assert not any(key in stderr for key in (FILE_KEY, ENV_KEY, PROFILE_KEY))
    else:
        assert code == 1 and received == expected, stderr  # the recorders refuse every key
