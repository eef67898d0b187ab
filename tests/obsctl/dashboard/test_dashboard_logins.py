"""Dashboard logins kept in the database, against real `obsctl serve` processes on both stores:
each login is its own random token, logout ends it on every server (a captured cookie no longer
works, not even on a server started later), and a login ends after 12 hours unused or 7 days."""

from __future__ import annotations

import hashlib
import re
import zlib
from base64 import urlsafe_b64decode
from datetime import timedelta

import orjson
import requests

from obsctl.timeutil import format_ts, now

KEY = "dashboard-logins-key"
ENV = {"SERVICE_API_KEY": KEY, "OBSCTL_RATE_LIMITS": "off"}


def log_in(server) -> requests.Session:
    browser = requests.Session()
    page = browser.get(f"{server.url}/ui/login", timeout=10).text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    answer = browser.post(f"{server.url}/ui/login", data={"api_key": KEY, "csrf_token": token},
                          allow_redirects=False, timeout=10)
    assert answer.status_code == 302
    return browser


def row_of(cookie: str) -> str:
    """The dashboard_logins row of a cookie: the SHA-256 of the token inside it (the cookie is
    signed, not encrypted: base64 JSON, zlib-compressed when that is shorter, then the signature)."""
    compressed = cookie.startswith(".")
    payload = cookie.lstrip(".").split(".")[0]
    data = urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    token = orjson.loads(zlib.decompress(data) if compressed else data)["login"]
    return hashlib.sha256(token.encode()).hexdigest()


def page_with(server, cookie: str) -> int:
    """The status of a dashboard page asked with this cookie value (302: sent to the login)."""
    return requests.get(f"{server.url}/ui/alerts", headers={"Cookie": f"obsctl_session={cookie}"},
                        allow_redirects=False, timeout=10).status_code


def log_out(server, browser: requests.Session) -> None:
    page = browser.get(f"{server.url}/ui/alerts", timeout=10).text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    answer = browser.post(f"{server.url}/ui/logout", data={"csrf_token": token}, allow_redirects=False, timeout=10)
    assert answer.status_code == 302


def test_logout_ends_a_login_on_every_server_and_after_a_restart(live_server, db, backend):
    first = live_server(ENV)
    browser, other = log_in(first), log_in(first)
    captured, kept = browser.cookies["obsctl_session"], other.cookies["obsctl_session"]
    assert captured != kept
    assert page_with(first, captured) == 200
    with db.read_snapshot():
        stored = [row[0] for row in db.conn.execute("SELECT token_hash FROM dashboard_logins")]
    assert len(stored) == 2
    assert not any(value in captured for value in stored)  # the table holds hashes, never tokens

    log_out(first, browser)
    assert page_with(first, captured) == 302
    assert page_with(first, kept) == 200  # another browser's login goes on
    first.stop()
    # Another server on the database (or this one restarted) knows the same logins.
    second = live_server(ENV)
    assert page_with(second, captured) == 302
    assert page_with(second, kept) == 200


def test_a_login_ends_after_12_hours_unused_or_7_days(live_server, db, backend):
    server = live_server(ENV)
    idle, old, fresh = (log_in(server).cookies["obsctl_session"] for _ in range(3))
    assert page_with(server, idle) == page_with(server, old) == page_with(server, fresh) == 200
    with db.read_snapshot():
        hashes = [row[0] for row in db.conn.execute(
            "SELECT token_hash FROM dashboard_logins ORDER BY created_at, token_hash")]
    assert len(hashes) == 3
    at = now()
    with db.transaction():
        db.conn.execute("UPDATE dashboard_logins SET last_seen_at = ? WHERE token_hash = ?",
                        [format_ts(at - timedelta(hours=12, minutes=1)), row_of(idle)])
        db.conn.execute("UPDATE dashboard_logins SET created_at = ?, last_seen_at = ? WHERE token_hash = ?",
                        [format_ts(at - timedelta(days=7, minutes=1)), format_ts(at), row_of(old)])
        db.conn.execute("UPDATE dashboard_logins SET last_seen_at = ? WHERE token_hash = ?",
                        [format_ts(at - timedelta(hours=11)), row_of(fresh)])
    assert page_with(server, idle) == 302
    assert page_with(server, old) == 302
    assert page_with(server, fresh) == 200  # used within 12 hours: goes on, and counts as used now
    with db.read_snapshot():
        seen = db.conn.execute("SELECT last_seen_at FROM dashboard_logins WHERE token_hash = ?",
                               [row_of(fresh)]).fetchone()[0]
    assert seen >= format_ts(at)
    log_in(server)  # a new login clears the ended ones away
    with db.read_snapshot():
        left = {row[0] for row in db.conn.execute("SELECT token_hash FROM dashboard_logins")}
    assert row_of(idle) not in left and row_of(old) not in left and row_of(fresh) in left
