"""Explain of a session too big to show whole (more than EXPLAIN_EVENTS events): the first and
last EXPLAIN_ENDS events of its timeline, a line saying what is left out, no call tree, and a
header and summary that still count every event; a session within the bound is explained as
before. The bounds are lowered here so the sessions stay small, on both stores."""

from __future__ import annotations

import re

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import explain
from obsctl.services.sessions.explain import explain_session
from tests.conftest import event


@pytest.fixture
def small_bounds(monkeypatch):
    monkeypatch.setattr(explain, "EXPLAIN_EVENTS", 20)
    monkeypatch.setattr(explain, "EXPLAIN_ENDS", 3)


def _seed(db, count: int) -> None:
    """`count` events of one session, one second apart; every 5th fails; each names the previous as parent."""
    ingest_events(db, [event("long", "error" if i % 5 == 4 else "llm_call", event_id=f"e{i}",
                             parent_id=f"e{i - 1}" if i else None, model="gpt-4o", tokens_in=10, tokens_out=2,
                             timestamp=f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}Z") for i in range(count)])


def _numbers(text: str) -> list[int]:
    timeline = text.split("## Timeline")[1].split("## ")[0]
    return [int(n) for n in re.findall(r"^(\d+)\. ", timeline, re.MULTILINE)]


def test_a_session_over_the_bound_shows_its_first_and_last_events(db, small_bounds):
    _seed(db, 30)
    text = explain_session(db, "long")["explanation"]
    assert _numbers(text) == [1, 2, 3, 28, 29, 30]
    assert "_... 24 events (#4 to #27) are left out: this explanation shows the first and last 3 of a session " \
           "of more than 20 events, without its call tree. `obsctl export long` has every event._" in text
    assert "## Call tree" not in text
    # The summary still counts every event and every error.
    assert "- **Errors:** 6\n" in text and "`gpt-4o` (30 calls, 300 in / 60 out tokens)" in text


def test_a_session_within_the_bound_is_explained_whole(db, small_bounds):
    _seed(db, 20)
    text = explain_session(db, "long")["explanation"]
    assert _numbers(text) == list(range(1, 21))
    assert "## Call tree" in text and "left out" not in text
    assert "- **Errors:** 4 (events #5, #10, #15, #20)" in text


def test_the_http_and_cli_explain_are_bounded_alike(db, small_bounds, client, cli):
    _seed(db, 25)
    body = client.get("/sessions/long/explain").get_json()
    assert _numbers(body["explanation"]) == [1, 2, 3, 23, 24, 25]
    assert cli("explain", "long").stdout.count("are left out") == 1
