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


def test_incident_postmortems_print_the_same(remote):
    from obsctl.services.incidents import list_incidents

    store = open_any(remote.db_url)
    try:
        incident_id = list_incidents(store, since=SINCE, until=UNTIL)["incidents"][0]["incident_id"]
    finally:
        store.close()
    for args in [("postmortem", "incident", incident_id, "--since", SINCE, "--until", UNTIL, "--json"),
                 ("postmortem", "incident", incident_id, "--since", SINCE, "--until", UNTIL, "--format", "md"),
                 ("postmortem", "incident", "inc-000000000000", "--since", SINCE, "--until", UNTIL),
                 ("postmortem", "incident", incident_id, "--since", "soon")]:
        remote.same(*args, volatile=("generated_at",))
