"""Triage of realistic sessions: the expected findings, scores and baselines, by hand."""

from __future__ import annotations

from datetime import timedelta

import pytest

from obsctl.errors import NotFound
from obsctl.services.triage import triage_session
from tests import triage_scenarios as sc


@pytest.fixture
def pricer(tmp_path):
    return sc.pricer(tmp_path)


def summary(report: dict) -> list[tuple[str, str]]:
    return [(f["category"], f["severity"]) for f in report["findings"]]


def test_rate_limit_cascade(db, pricer):
    sc.rate_limit_cascade(db)
    report = triage_session(db, "rl", pricer=pricer)
    assert summary(report) == [("errors", "critical"), ("errors", "warning"), ("tools", "warning")]
    assert report["severity"] == "critical"
    # errors: 40 x 5/6 + min(10, 2 x 5) + 15 (failed) = 58.33; tools: web_search 1/1 failed = 5
    # 36.7 is already under the critical ceiling (64.9): severity takes nothing more.
    assert report["score_penalties"] == {"errors": 58.33, "tools": 5.0, "loops": 0.0, "latency": 0.0,
                                         "baseline": 0.0, "cost": 0.0, "severity": 0.0}
    assert report["health_score"] == 36.7
    assert report["grade"] == "F"
    first = report["findings"][0]
    assert first["title"] == "5 of 6 events failed (83.33%); the session ended in failure"
    assert first["evidence"]["kinds"] == {"rate_limit": 3, "timeout": 1, "other": 1}
    # Its rate limits came 2 s then 4 s apart: it already backs off, so it is not told to.
    assert first["suggestion"].startswith("The agent already backs off (2/4 s between rate-limited calls)")
    assert report["findings"][1]["evidence"]["pattern"] == (
        "rate limit exceeded: retry after <n>s (request <id>)")
    tool = report["findings"][2]
    assert tool["title"] == "Tool web_search failed 1 of 1 call(s) (100.0%)"
    assert tool["evidence"]["failure_modes"][0]["kind"] == "timeout"
    assert report["metrics"] == {
        "duration_ms": 42000.0, "total_tokens": 1500, "event_count": 8, "error_count": 5,
        "body_events": 6, "error_events": 5, "error_event_rate": 83.33,
        "error_rate": 83.33, "tokens_in": 1200, "tokens_out": 300, "processing_ms": 30900.0,
        "cost_usd": 0.006,
    }


def test_rate_limit_errors_are_grouped_by_fingerprint(db, pricer):
    sc.rate_limit_cascade(db)
    groups = triage_session(db, "rl", pricer=pricer)["error_groups"]
    assert [(g["event_type"], g["tool_name"], g["kind"], g["count"]) for g in groups] == [
        ("rate_limit", None, "rate_limit", 3), ("tool_call", "web_search", "timeout", 1),
        ("error", None, "other", 1)]
    assert groups[0]["example"] == "Rate limit exceeded: retry after 2s (request req_8f3a2b)"
    assert (groups[0]["first_seen"], groups[0]["last_seen"]) == (sc.ts(2), sc.ts(8))
    assert len({g["fingerprint"] for g in groups}) == 3


def test_runaway_loop(db, pricer):
    sc.runaway_loop(db, repeats=7)
    report = triage_session(db, "loop", pricer=pricer)
    assert summary(report) == [("loop", "warning")]
    finding = report["findings"][0]
    assert finding["title"] == "Loop: fetch_url called 7 times in a row with the same input and identical outputs"
    assert finding["evidence"]["input"] == '{"url":"https://example.com/p"}'
    assert finding["evidence"]["tool_ms"] == 1400.0
    # loops: min(10, 7) = 7
    assert report["score_penalties"]["loops"] == 7.0
    # 100 - 7 = 93 (A) but the loop is a warning: capped at 89.9 (B+), 3.1 more points.
    assert report["score_penalties"]["severity"] == 3.1
    assert (report["severity"], report["health_score"], report["grade"]) == ("warning", 89.9, "B+")
    assert report["loops"][0]["count"] == 7


def test_ten_repeats_make_a_critical_loop(db, pricer):
    sc.runaway_loop(db, repeats=10)
    report = triage_session(db, "loop", pricer=pricer)
    assert summary(report) == [("loop", "critical")]
    # 100 - min(10, 10) = 90 (A) under a critical finding: capped at 64.9 (C).
    assert report["score_penalties"]["loops"] == 10.0
    assert (report["health_score"], report["grade"]) == (64.9, "C")


def test_four_repeats_are_not_a_loop(db, pricer):
    sc.runaway_loop(db, repeats=4)
    report = triage_session(db, "loop", pricer=pricer)
    assert report["findings"] == []
    assert report["health_score"] == 100.0
    assert report["severity"] == "healthy"


def test_token_spike_against_a_steady_baseline(db, pricer):
    sc.token_spike(db)
    report = triage_session(db, "spike", pricer=pricer)
    assert summary(report) == [("anomaly", "critical"), ("anomaly", "critical")]
    assert [f["evidence"]["metric"] for f in report["findings"]] == ["total_tokens", "cost_usd"]
    tokens = report["baseline"]["metrics"]["total_tokens"]
    # median 1,200, MAD 0: scale = 5% of the median = 60; z = (24,000 - 1,200) / 60 = 380
    assert tokens == {"value": 24000, "median": 1200.0, "scale": 60.0, "robust_z": 380.0,
                      "change_pct": 1900.0, "status": "anomaly", "severity": "critical"}
    assert report["findings"][0]["title"] == "Token usage 24,000 tokens is 20.0x the baseline median 1,200 tokens"
    # cost: 20,000 x 2.5e-6 + 4,000 x 1e-5 = 0.09 against 0.0045
    assert report["baseline"]["metrics"]["cost_usd"]["value"] == 0.09
    assert report["baseline"]["metrics"]["cost_usd"]["median"] == 0.0045
    assert report["baseline"]["metrics"]["duration_ms"]["status"] == "normal"
    assert report["score_penalties"]["baseline"] == 20.0
    # 100 - 20 = 80 (B), but the token anomaly is critical: capped at 64.9 (C).
    assert (report["severity"], report["health_score"], report["grade"]) == ("critical", 64.9, "C")


def test_baseline_is_the_agents_previous_seven_days(db, pricer):
    sc.token_spike(db)
    baseline = triage_session(db, "spike", pricer=pricer)["baseline"]
    # base-1..4 only: not too-old (8 days), other-agent, later (after the start), nor itself
    assert baseline["sessions"] == 4
    assert baseline["sufficient"] is True
    assert (baseline["since"], baseline["until"]) == ("2026-03-03T12:00:00.000Z", "2026-03-10T12:00:00.000Z")
    assert baseline["note"] is None


def test_clean_session(db, pricer):
    sc.clean_session(db)
    report = triage_session(db, "clean", pricer=pricer)
    assert report["findings"] == []
    assert report["severity"] == "healthy"
    assert report["health_score"] == 100.0
    assert report["grade"] == "A+"
    assert {m["status"] for m in report["baseline"]["metrics"].values()} == {"normal"}
    assert report["cost"]["total_usd"] == 0.0045


def test_without_enough_baseline_drift_is_skipped_and_said(db, pricer):
    sc.steady_session(db, "b1", "lonely", sc.T0 - timedelta(days=1))
    sc.steady_session(db, "b2", "lonely", sc.T0 - timedelta(days=2))
    sc.steady_session(db, "alone", "lonely", sc.T0, tokens_in=500_000)
    baseline = triage_session(db, "alone", pricer=pricer)["baseline"]
    assert baseline["sessions"] == 2
    assert baseline["sufficient"] is False
    assert baseline["metrics"] == {}
    assert "3 are needed" in baseline["note"]


def test_slow_tool_calls_against_the_baseline(db, pricer):
    sc.slow_tool(db)
    report = triage_session(db, "slow", pricer=pricer)
    assert summary(report) == [("latency", "warning")]
    evidence = report["findings"][0]["evidence"]
    # baseline median = p95 = 100 ms: threshold max(2 x 100, 3 x 100, 1000) = 1000 ms
    assert evidence["threshold_ms"] == 1000.0
    assert evidence["reference"] == "baseline"
    assert evidence["slow_events"] == 3
    assert report["tools"] == [{"tool_name": "db_query", "calls": 5, "failures": 0,
                                "failure_rate_pct": 0.0, "slow_calls": 3, "p50_ms": 5000.0,
                                "p95_ms": 5000.0}]
    # 100 - 2 x 3 slow events = 94, capped at 89.9 by the warning.
    assert report["score_penalties"]["latency"] == 6.0
    assert (report["severity"], report["health_score"]) == ("warning", 89.9)


def test_unpriced_models_are_named_never_zero(db, pricer):
    from obsctl.services.ingest import ingest_events

    ingest_events(db, [
        {"session_id": "u", "event_type": "llm_call", "model": "in-house-llm", "tokens_in": 700,
         "tokens_out": 300, "timestamp": sc.ts(0)},
        {"session_id": "u", "event_type": "llm_call", "model": "gpt-4o", "tokens_in": 1000,
         "tokens_out": 0, "timestamp": sc.ts(1)},
    ])
    report = triage_session(db, "u", pricer=pricer)
    assert report["cost"]["unpriced_models"] == ["in-house-llm"]
    assert report["cost"]["unpriced_tokens"] == 1000
    assert report["cost"]["total_usd"] == 0.0025
    # equal token counts: ordered by model name
    assert [(m["model"], m["cost_usd"]) for m in report["cost"]["by_model"]] == [
        ("gpt-4o", 0.0025), ("in-house-llm", None)]
    assert summary(report) == [("cost", "info")]
    assert report["findings"][0]["title"] == "No price for model(s): in-house-llm"


def test_only_unpriced_tokens_cost_null(db, pricer):
    from obsctl.services.ingest import ingest_events

    ingest_events(db, [{"session_id": "u", "event_type": "llm_call", "model": "in-house-llm",
                        "tokens_in": 10, "timestamp": sc.ts(0)}])
    assert triage_session(db, "u", pricer=pricer)["metrics"]["cost_usd"] is None


def test_tokens_spent_on_failed_steps(db, pricer):
    from obsctl.services.ingest import ingest_events

    ingest_events(db, [
        {"session_id": "w", "event_type": "llm_call", "model": "gpt-4o", "tokens_in": 3000,
         "timestamp": sc.ts(0)},
        {"session_id": "w", "event_type": "llm_error", "model": "gpt-4o", "tokens_in": 1000,
         "output_data": {"error": "context length exceeded"}, "timestamp": sc.ts(1)},
        {"session_id": "w", "event_type": "llm_call", "model": "gpt-4o", "tokens_in": 100,
         "timestamp": sc.ts(2)},
    ])
    report = triage_session(db, "w", pricer=pricer)
    waste = [f for f in report["findings"] if f["category"] == "cost"]
    # 1,000 of 4,100 tokens = 24.39% >= 20%
    assert [f["title"] for f in waste] == ["24.39% of tokens (1,000) were spent on failed steps"]
    assert report["error_groups"][0]["kind"] == "context_length"


def test_unknown_session_is_not_found(db, pricer):
    with pytest.raises(NotFound):
        triage_session(db, "nope", pricer=pricer)
