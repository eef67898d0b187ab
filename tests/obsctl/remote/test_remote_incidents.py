"""`obsctl incidents` through a server prints what it prints on the database."""

from __future__ import annotations

import pytest

from tests.obsctl.incidents.test_incidents import SINCE, UNTIL, fleet
from tests.store_support import open_any


@pytest.fixture(scope="module", autouse=True)
def fleet_loaded(remote):
    store = open_any(remote.db_url)
    try:
        fleet(store)
    finally:
        store.close()


@pytest.mark.parametrize("args", [
    ("incidents", "--since", SINCE, "--until", UNTIL, "--json"),
    ("incidents", "--since", SINCE, "--until", UNTIL),
    ("incidents", "--since", SINCE, "--until", UNTIL, "--agent", "support-bot", "--gap-minutes", "90"),
    ("incidents", "--since", SINCE, "--until", UNTIL, "--min-sessions", "1", "--limit", "2", "--json"),
    ("incidents", "--since", "2w", "--json"),
    ("incidents", "--since", "soon"),
    ("incidents", "--since", UNTIL, "--until", SINCE),
])
def test_incidents_print_the_same(remote, args):
    remote.same(*args, volatile=("since", "until"))
