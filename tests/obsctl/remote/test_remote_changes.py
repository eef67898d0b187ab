"""`obsctl changes` and `obsctl changes ack` through a server print what they print on the
database."""

from __future__ import annotations

import pytest

from tests.obsctl.changes.test_changes import SINCE, UNTIL, at, fleet
from tests.store_support import open_any


@pytest.fixture(scope="module", autouse=True)
def fleet_loaded(remote):
    store = open_any(remote.db_url)
    try:
        fleet(store)
    finally:
        store.close()


@pytest.mark.parametrize("args", [
    ("changes", "--since", SINCE, "--until", UNTIL, "--json"),
    ("changes", "--since", SINCE, "--until", UNTIL),
    ("changes", "--since", SINCE, "--until", at(60), "--agent", "research-agent", "--limit", "1"),
    ("changes", "--since", "2w", "--json"),
    ("changes", "--since", "soon"),
    ("changes", "--since", UNTIL, "--until", SINCE),
    ("changes", "ack", "nobody"),
    ("changes", "ack", f"research-agent@{at(41)}"),
    ("changes", "ack", f"support-bot@{at(50)}", "--note", "release 1.3 kept", "--json"),
    ("changes", "--since", SINCE, "--until", UNTIL, "--json"),
])
def test_changes_print_the_same(remote, args):
    remote.same(*args, volatile=("since", "until", "acknowledged_at"))
