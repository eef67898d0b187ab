"""What a session cost counts: in its findings (naming the model that made it), and in its
health score. Every figure is worked out by hand from triage_scenarios.expensive_model_switch."""

from __future__ import annotations

import json

import pytest

from obsctl.services.pricing import Pricer
from obsctl.services.triage import triage_session
from tests import triage_scenarios as sc

# USD per million tokens.
PRICES = {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},
          "o1-preview": {"input_per_mtok": 15.0, "output_per_mtok": 60.0}}


@pytest.fixture
def pricer(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(PRICES))
    return Pricer(path)


def test_an_expensive_session_is_critical_and_names_the_model(db, pricer):
    sc.expensive_model_switch(db)
    report = triage_session(db, "pricey", pricer=pricer)
    # o1-preview: 400,000 x 15e-6 + 20,000 x 60e-6 = 7.20; gpt-4o-mini: 1,000 x 0.15e-6 + 200 x 0.6e-6
    # = 0.00027; the total 7.20027 against a median session of 0.00027: 26,668x.
    (finding,) = [f for f in report["findings"] if f["category"] == "cost"]
    assert finding["severity"] == "critical"
    assert finding["title"] == "Cost $7.20, 26,668x the agent's median session ($0.0003)"
    assert finding["detail"].startswith("o1-preview: $7.20, 100.0% of the cost, on an agent that usually "
                                        "runs gpt-4o-mini.")
    assert finding["evidence"]["top_model"] == "o1-preview"
    assert finding["evidence"]["usual_model"] == "gpt-4o-mini"
    # The baseline's cost anomaly is what this finding explains: folded into it.
    assert [f for f in report["findings"] if f["evidence"].get("metric") == "cost_usd"] == []
    (explained,) = finding["evidence"]["explains"]
    assert (explained["metric"], explained["status"], explained["severity"]) == ("cost_usd", "anomaly", "critical")
    assert "It also explains this: Cost $7.20 is 26,667.7x the baseline median $0.0003." in finding["detail"]
    # cost: 10 ($5 or more) + 10 (100x the median or more); baseline: tokens and cost anomalies
    # are critical, 10 each, capped at 20.
    assert report["score_penalties"]["cost"] == 20.0
    assert report["score_penalties"]["baseline"] == 20.0
    assert report["health_score"] == 60.0 and report["grade"] == "C"
    assert report["severity"] == "critical"


def test_a_notable_cost_is_a_warning(db, pricer, tmp_path):
    sc.expensive_model_switch(db)
    cheaper = tmp_path / "cheaper.json"
    cheaper.write_text(json.dumps({**PRICES, "o1-preview": {"input_per_mtok": 3.0, "output_per_mtok": 0.0}}))
    report = triage_session(db, "pricey", pricer=Pricer(cheaper))
    (finding,) = [f for f in report["findings"] if f["category"] == "cost"]
    # 400,000 x 3e-6 = 1.20: $1 or more is a warning, 4 points; still 100x the median: 10 more.
    # The finding explains the baseline's cost anomaly (critical: 5x the median or more), so it
    # takes that severity.
    assert finding["title"].startswith("Cost $1.20, ") and "Thresholds: $1 (warning)" in finding["detail"]
    assert finding["severity"] == "critical" and finding["evidence"]["explains"][0]["severity"] == "critical"
    assert report["score_penalties"]["cost"] == 14.0


def test_cheap_sessions_get_no_cost_finding(db, pricer):
    sc.expensive_model_switch(db)
    report = triage_session(db, "cheap-0", pricer=pricer)
    assert [f for f in report["findings"] if f["category"] == "cost"] == []
    assert report["score_penalties"]["cost"] == 0.0


def test_the_postmortem_names_the_model_that_made_the_cost(db, pricer):
    from obsctl.services.postmortem import postmortem_session

    sc.expensive_model_switch(db)
    report = postmortem_session(db, "pricey", pricer=pricer)
    assert ("Cost $7.2003 (most of it o1-preview: $7.20, 100.0% of the cost, on an agent that usually "
            "runs gpt-4o-mini).") in report["summary"]
