"""Costs computed at ingest: per event, per session (with unpriced calls), the price table
recorded, `db reprice`, `db copy`, and the same numbers through the CLI and the HTTP API.

Prices (tests/conftest.py TEST_PRICES, USD per million tokens): gpt-4o $1 in / $2 out,
big-model $10 / $30; "mystery" has no price.
"""

from __future__ import annotations

import json

import pytest

from obsctl.services.analytics import get_analytics
from obsctl.services.ingest import ingest_events
from obsctl.services.maintenance import db_info, reprice
from obsctl.services.sessions import get_session, list_sessions
from obsctl.services.sessions.compare import compare_sessions
from obsctl.services.transfer import copy_store
from tests.conftest import event, use_prices
from tests.store_support import open_db

T = "2026-11-20T10:00:0{}Z"


def seed(db):
    ingest_events(db, [
        # 1000 x $1 + 500 x $2 per million = $0.002
        event("s1", event_id="e1", model="gpt-4o", tokens_in=1000, tokens_out=500, timestamp=T.format(1)),
        # 100 x $10 + 10 x $30 per million = $0.0013
        event("s1", event_id="e2", model="big-model", tokens_in=100, tokens_out=10, timestamp=T.format(2)),
        # tokens of a model without a price: unpriced, left out of the cost
        event("s1", event_id="e3", model="mystery", tokens_in=10, tokens_out=5, timestamp=T.format(3)),
        # no tokens: costs nothing and is not an unpriced call
        event("s1", "tool_call", event_id="e4", tool_call={"name": "search"}, timestamp=T.format(4)),
        event("s2", event_id="e5", model="mystery", tokens_in=7, timestamp=T.format(5)),
    ])


@pytest.fixture
def priced(db, tmp_path):
    use_prices(db, tmp_path)
    seed(db)
    return db


def test_each_event_and_session_carries_its_cost(priced):
    s1 = get_session(priced, "s1")
    assert (s1["cost_usd"], s1["unpriced_calls"]) == (0.0033, 1)
    assert [e["cost_usd"] for e in s1["events"]] == [0.002, 0.0013, None, None]
    s2 = get_session(priced, "s2")
    assert (s2["cost_usd"], s2["unpriced_calls"]) == (None, 1)
    listed = {s["session_id"]: (s["cost_usd"], s["unpriced_calls"]) for s in list_sessions(priced)["sessions"]}
    assert listed == {"s1": (0.0033, 1), "s2": (None, 1)}


def test_duplicates_never_count_twice_and_later_batches_add(priced):
    seed(priced)  # the same event ids again: all duplicates
    ingest_events(priced, [event("s1", event_id="e6", model="gpt-4o", tokens_in=1_000_000, timestamp=T.format(6)),
                           event("s2", event_id="e7", model="gpt-4o", tokens_out=500_000, timestamp=T.format(7))])
    s1, s2 = get_session(priced, "s1"), get_session(priced, "s2")
    assert (s1["cost_usd"], s1["unpriced_calls"]) == (1.0033, 1)
    # s2 had nothing priced (null); its first priced call makes it $1.
    assert (s2["cost_usd"], s2["unpriced_calls"]) == (1.0, 1)


def test_compare_shows_each_cost_and_the_difference(priced):
    ingest_events(priced, [event("s3", model="gpt-4o", tokens_in=3000, tokens_out=1000, timestamp=T.format(8))])
    result = compare_sessions(priced, "s1", "s3")
    assert (result["session_a"]["cost_usd"], result["session_b"]["cost_usd"]) == (0.0033, 0.005)
    assert result["deltas"]["cost_usd"] == {"absolute": 0.0017, "percent": 51.52}
    # A side without any priced call: no difference to show.
    assert compare_sessions(priced, "s1", "s2")["deltas"]["cost_usd"] == {"absolute": None, "percent": None}


def test_the_price_table_is_recorded_and_reprice_applies_a_new_one(priced, tmp_path):
    table = db_info(priced, "x", check=False)["prices"]
    assert table["prices"].startswith("genai-prices ") and " + overrides sha256:" in table["prices"]
    assert (table["mixed"], table["repriced_at"]) == (False, None)

    # New prices: events stored from now on use them, so the stored costs are mixed.
    new = tmp_path / "new"
    new.mkdir()
    use_prices(priced, new, {"gpt-4o": {"input_per_mtok": 2, "output_per_mtok": 4},
                             "mystery": {"input_per_mtok": 1000, "output_per_mtok": 1000}})
    ingest_events(priced, [event("s2", event_id="e8", model="gpt-4o", tokens_in=500, timestamp=T.format(8))])
    mixed = db_info(priced, "x", check=False)["prices"]
    assert mixed["mixed"] is True and mixed["prices"] != table["prices"]

    result = reprice(priced)
    assert result == {"prices": mixed["prices"], "models": 2, "unpriced_models": ["big-model"],
                      "events": 5, "sessions": 2, "cache_counts_recounted": 0}
    # s1: gpt-4o 1000 x $2 + 500 x $4 = $0.004, mystery 15 x $1000 per million = $0.015,
    # big-model no longer priced. s2: mystery 7 x $1000 = $0.007, gpt-4o 500 x $2 = $0.001.
    s1, s2 = get_session(priced, "s1"), get_session(priced, "s2")
    assert (s1["cost_usd"], s1["unpriced_calls"]) == (0.019, 1)
    assert (s2["cost_usd"], s2["unpriced_calls"]) == (0.008, 0)
    # The analytics cost per model reads the rollup, which the reprice rebuilt.
    by_model = {m["model"]: m for m in get_analytics(priced)["costs"]["by_model"]}
    assert (by_model["gpt-4o"]["cost_usd"], by_model["mystery"]["cost_usd"]) == (0.005, 0.022)
    assert (by_model["big-model"]["cost_usd"], by_model["big-model"]["unpriced_calls"]) == (None, 1)
    after = db_info(priced, "x", check=False)["prices"]
    assert after["mixed"] is False and after["repriced_at"] is not None


def test_db_copy_keeps_every_cost(priced, tmp_path):
    target = open_db(tmp_path / "copy.db")
    try:
        copy_store(priced, target)
        assert get_session(target, "s1") == get_session(priced, "s1")
        assert list_sessions(target) == list_sessions(priced)
        assert db_info(target, "x", check=False)["prices"] == db_info(priced, "x", check=False)["prices"]
    finally:
        target.close()


def test_cli_and_api_show_the_same_costs(db, tmp_path, cli, make_app):
    prices = use_prices(db, tmp_path)
    env = {"OBSCTL_PRICES": str(prices)}
    lines = "\n".join(json.dumps(e) for e in [
        event("s1", event_id="e1", model="gpt-4o", tokens_in=1000, tokens_out=500, timestamp=T.format(1)),
        event("s1", event_id="e3", model="mystery", tokens_in=10, tokens_out=5, timestamp=T.format(3))])
    assert cli("ingest", "-", input=lines, env=env).exit_code == 0
    listed = json.loads(cli("sessions", "list", "--json", env=env).stdout)
    assert (listed["sessions"][0]["cost_usd"], listed["sessions"][0]["unpriced_calls"]) == (0.002, 1)
    api = make_app(env).test_client()
    assert api.get("/sessions").get_json() == listed
    table = cli("sessions", "list", env=env).stdout
    assert "$0.002000 +1 unpriced" in table
    shown = json.loads(cli("db", "reprice", "--json", env=env).stdout)
    assert (shown["models"], shown["unpriced_models"], shown["events"]) == (1, ["mystery"], 2)
    assert api.post("/db/reprice").get_json() == shown


def test_a_bad_prices_file_stops_ingest_with_its_message_and_reads_still_work(db, tmp_path, cli):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    env = {"OBSCTL_PRICES": str(bad)}
    result = cli("ingest", "-", input=json.dumps(event("s1", model="gpt-4o", tokens_in=1)), env=env)
    assert result.exit_code == 1 and "OBSCTL_PRICES file" in result.stderr and "is not valid JSON" in result.stderr
    assert cli("sessions", "list", "--json", env=env).exit_code == 0


def test_a_database_from_before_costs_counts_its_calls_unpriced_until_reprice(tmp_path):
    from tests.obsctl.ingest.test_ingest_tool_aliases import ALIAS_CASES, SDK_SESSION, _old_database, load

    old = _old_database(tmp_path / "old.db")  # migrated from before m006 to today, m021 included
    fresh = open_db(tmp_path / "fresh.db")
    for path in (SDK_SESSION, ALIAS_CASES):
        ingest_events(fresh, load(path))
    costs = "SELECT session_id, cost_usd, unpriced_calls FROM sessions ORDER BY 1"
    calls = dict(fresh.conn.execute(
        "SELECT session_id, COUNT(*) FROM events WHERE COALESCE(tokens_in, 0) + COALESCE(tokens_out, 0) > 0 "
        "GROUP BY 1").fetchall())
    # Stored before costs were: every call that used tokens is unpriced, and the table says so.
    assert old.conn.execute(costs).fetchall() == [(s, None, calls.get(s, 0)) for s, _, _ in
                                                  fresh.conn.execute(costs).fetchall()]
    assert db_info(old, "x", check=False)["prices"]["prices"] == "none"
    reprice(old)
    assert old.conn.execute(costs).fetchall() == fresh.conn.execute(costs).fetchall()
    assert db_info(old, "x", check=False)["prices"]["mixed"] is False
