"""The scorecard pages are answered from one fleet computation kept a minute per app
(services/dashboard.ResultCache): the cache itself, and pages that agree with the API."""

from __future__ import annotations

import re
import threading
import time
from datetime import timedelta

import pytest

from obsctl.services.dashboard import SCORECARDS_TTL_S, ResultCache
from obsctl.services.ingest import ingest_events
from obsctl.services.scorecards import (
    agent_scorecard,
    fleet_regressions,
    fleet_scorecards,
    fleet_window,
    get_scorecard,
    list_scorecards,
)
from obsctl.timeutil import now
from obsctl.web.ui.views import CACHE_KEY
from tests.obsctl.scorecards.test_scorecards import AT, fleet_events, llm, session


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_result_is_kept_for_the_ttl_then_computed_again():
    clock, calls = Clock(), []
    cache = ResultCache(ttl=60, clock=clock)
    compute = lambda: calls.append(1) or len(calls)  # noqa: E731
    assert [cache.get("k", compute), cache.get("k", compute)] == [1, 1]
    clock.t += 59.9
    assert cache.get("k", compute) == 1
    clock.t += 0.1
    assert cache.get("k", compute) == 2 and cache.get("other", compute) == 3


def test_an_exception_is_never_kept():
    cache, calls = ResultCache(ttl=60, clock=Clock()), []

    def failing():
        calls.append(1)
        raise LookupError("no such agent")

    for _ in range(2):
        with pytest.raises(LookupError):
            cache.get("k", failing)
    assert len(calls) == 2 and cache.get("k", lambda: "fine") == "fine"


def test_the_least_recently_used_results_go_first():
    cache = ResultCache(ttl=60, max_entries=2, clock=Clock())
    cache.get("a", lambda: "a1")
    cache.get("b", lambda: "b1")
    cache.get("a", lambda: "a2")  # kept: a is now the most recently used
    cache.get("c", lambda: "c1")  # b goes
    assert [cache.get(k, lambda k=k: f"{k}-new") for k in "cab"] == ["c1", "a1", "b-new"]


def test_requests_at_the_same_time_compute_once():
    cache, calls, results = ResultCache(ttl=60), [], []
    started = threading.Event()

    def slow():
        calls.append(1)
        started.set()
        time.sleep(0.3)
        return "fleet"

    threads = [threading.Thread(target=lambda: results.append(cache.get("k", slow))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert started.is_set() and len(calls) == 1 and results == ["fleet"] * 4


def test_scoring_a_kept_fleet_gives_what_the_cli_and_api_compute(db, settings):
    ingest_events(db, fleet_events())
    fleet = fleet_window(db, settings, at=AT)
    regressions = fleet_regressions(db, settings, fleet)
    cards = list_scorecards(db, settings, at=AT)
    assert fleet_scorecards(db, settings, fleet) == fleet_scorecards(db, settings, fleet, regressions) == cards
    assert sorted(c["agent"] for c in cards) == ["alpha", "beta", "delta"]
    for agent in ("alpha", "beta", "delta"):
        expected = get_scorecard(db, settings, agent, at=AT)
        assert agent_scorecard(db, settings, agent, fleet) == expected
        assert agent_scorecard(db, settings, agent, fleet, regressions) == expected


def _rows(html: str) -> dict[str, tuple[str, str]]:
    """{agent: (grade, overall score)} of the scorecards page."""
    return {agent: (grade, score) for agent, grade, score in re.findall(
        r'<td><a href="/ui/scorecards/[^"]+">([^<]+)</a></td>\s*<td><span class="grade[^"]*">([^<]+)</span></td>'
        r'\s*<td>([^<]+)</td>', html)}


def test_the_pages_show_what_the_api_returns_and_change_after_the_ttl(make_app, db):
    at = now()
    ingest_events(db, fleet_events(at))
    app = make_app()
    clock = Clock()
    app.extensions[CACHE_KEY] = ResultCache(clock=clock)
    client = app.test_client()
    page = client.get("/ui/scorecards").get_data(as_text=True)
    api = client.get("/scorecards").get_json()
    assert _rows(page) == {c["agent"]: (c["grade"], str(c["overall_score"])) for c in api}
    assert set(_rows(page)) == {"alpha", "beta", "delta"}
    one = client.get("/ui/scorecards/beta").get_data(as_text=True)
    card = client.get("/scorecards/beta").get_json()
    assert f"<dd>{card['overall_score']}</dd>" in one and f"<dd>{card['sessions_analyzed']}</dd>" in one

    # A new agent's session: the pages keep the computed fleet until the minute is over.
    ingest_events(db, session("e1", "epsilon", timedelta(hours=1), [llm(100)], at=at))
    assert "epsilon" not in _rows(client.get("/ui/scorecards").get_data(as_text=True))
    assert client.get("/ui/scorecards/epsilon").status_code == 404
    clock.t += SCORECARDS_TTL_S
    assert "epsilon" in _rows(client.get("/ui/scorecards").get_data(as_text=True))
    assert client.get("/ui/scorecards/epsilon").status_code == 200
