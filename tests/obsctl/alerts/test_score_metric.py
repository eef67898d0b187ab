"""The score metric `avg_score:NAME`: the mean of a name's scores given in the window, usable
by alert rules and SLA targets."""

from __future__ import annotations

from datetime import timedelta

import pytest

from obsctl.errors import InvalidInput
from obsctl.services.ingest import ingest_events
from obsctl.services.metrics import check_metric, compute_metrics
from obsctl.services.sessions.housekeeping import score_session
from obsctl.timeutil import format_ts, now
from tests.conftest import event


@pytest.fixture
def scored(db):
    """helpfulness 0.2 and 0.4 on alpha's session, 0.9 on beta's; accuracy 1 on beta's."""
    ingest_events(db, [event("s1", "session_start", agent_name="alpha"),
                       event("s2", "session_start", agent_name="beta")])
    for sid, name, value in (("s1", "helpfulness", 0.2), ("s1", "helpfulness", 0.4), ("s2", "helpfulness", 0.9),
                             ("s2", "accuracy", 1)):
        score_session(db, sid, {"name": name, "value": value})
    return db


def _since(minutes: int = 60) -> str:
    return format_ts(now() - timedelta(minutes=minutes))


def test_the_mean_of_the_named_scores_in_the_window(scored):
    values = compute_metrics(scored, ["avg_score:helpfulness", "avg_score:accuracy", "avg_score:other"],
                             since=_since())
    assert values["avg_score:helpfulness"] == pytest.approx(1.5 / 3)
    assert values["avg_score:accuracy"] == 1.0
    assert values["avg_score:other"] is None  # no data: the rule reports no_data


def test_an_agent_filter_keeps_its_sessions_scores(scored):
    assert compute_metrics(scored, ["avg_score:helpfulness"], since=_since(), agent="alpha") == {
        "avg_score:helpfulness": pytest.approx(0.3)}


def test_scores_outside_the_window_do_not_count(scored):
    later = format_ts(now() + timedelta(minutes=1))
    assert compute_metrics(scored, ["avg_score:helpfulness"], since=later)["avg_score:helpfulness"] is None
    assert compute_metrics(scored, ["avg_score:helpfulness"], since=_since(), until=_since(30)) == {
        "avg_score:helpfulness": None}


@pytest.mark.parametrize("metric", ["avg_score:", "avg_score:a b", "avg_scores:x", "score"])
def test_a_bad_score_metric_is_refused(metric):
    with pytest.raises(InvalidInput):
        check_metric(metric)


def test_an_alert_rule_on_the_average_score_fires(scored, client):
    created = client.post("/alerts/rules", json={"name": "unhelpful", "metric": "avg_score:helpfulness",
                                                 "operator": "<", "threshold": 0.5, "agent_filter": "alpha"})
    assert created.status_code == 201
    result = client.post("/alerts/evaluate").get_json()["results"][0]
    assert (result["status"], result["value"]) == ("fired", pytest.approx(0.3))
    bad = client.post("/alerts/rules", json={"name": "x", "metric": "avg_score:", "operator": "<", "threshold": 1})
    assert bad.status_code == 400 and "avg_score:NAME" in bad.get_json()["error"]
    names = [m["name"] for m in client.get("/alerts/metrics").get_json()["metrics"]]
    assert names[-1] == "avg_score:NAME"


def test_an_sla_target_on_the_average_score(scored, client):
    assert client.put("/sla/targets", json={"agent_name": "beta", "metric": "avg_score:helpfulness",
                                            "operator": ">=", "target_value": 0.8}).status_code == 201
    result = client.post("/sla/check").get_json()["results"][0]
    assert (result["status"], result["actual_value"]) == ("pass", 0.9)
