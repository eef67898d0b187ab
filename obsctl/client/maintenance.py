"""Remote retention and database description: the use cases of `obsctl.services.maintenance`
(prune, db info) answered by a server's HTTP API. Each function has its service's name and
parameters, with the client in place of the store, and returns what the service returns."""

from __future__ import annotations

import time
from pathlib import Path

from obsctl.client.http import Client

# The integrity check reads the whole SQLite file: on a large one it takes minutes.
CHECK_TIMEOUT = 900.0


def prune(client: Client, older_than: str, *, dry_run: bool = False,
          on_progress=lambda sessions, events: None, cutoff: str | None = None,
          deadline: float | None = None, idle_timeout=None) -> dict:
    """The server prunes for a few seconds per request and says whether it finished; the
    requests go on, with the first answer's cutoff, until it has. Sending one again after a
    lost answer is harmless (what it deleted stays deleted), though that batch then goes
    uncounted. The server completes idle sessions by its own OBSCTL_SESSION_IDLE_TIMEOUT
    (`idle_timeout` is the local setting, not sent)."""
    sessions = events = 0
    while True:
        body = {"older_than": older_than, "dry_run": dry_run}
        if cutoff is not None:
            body["cutoff"] = cutoff
        answer = client.post_json("/prune", body, idempotent=True)
        cutoff = answer["cutoff"]
        sessions += answer["sessions"]
        events += answer["events"]
        result = {"older_than": answer["older_than"], "cutoff": cutoff, "dry_run": answer["dry_run"],
                  "sessions": sessions, "events": events}
        if answer.get("complete", True):
            return result
        on_progress(sessions, events)
        if deadline is not None and time.monotonic() >= deadline:
            return {**result, "complete": False}


def reprice(client: Client) -> dict:
    """The server costs its stored events again with its own price table (its OBSCTL_PRICES)."""
    return client.post_json("/db/reprice", {}, idempotent=True)  # the same result however often


def db_info(client: Client, path: Path | str | None = None, *, check: bool = True) -> dict:
    """The server's database (`path` is unused: the server names its own)."""
    return client.get_json("/db/info", {"check": "true" if check else "false"},
                           timeout=CHECK_TIMEOUT if check else None)
