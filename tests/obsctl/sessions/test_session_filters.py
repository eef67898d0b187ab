"""Session list filters, sorts and the keyset cursor (services/sessions/filters.py), on both
stores, through the service, the CLI and GET /sessions."""

from __future__ import annotations

import json

import pytest

from obsctl.errors import InvalidInput
from obsctl.services.ingest import ingest_events
from obsctl.services.sessions import housekeeping, list_sessions
from tests.conftest import event

# Four sessions, by hand:
#   id  agent  started      model      tool    errors          tokens  ended (duration)  metadata
#   a   bot    01-01 00:00  gpt-4o     search  -               15      00:00:10 (10 s)   tier=gold, n=2
#   b   bot    01-02 00:00  -          search  tool_error x1   0       00:00:01 (1 s)    tier=free
#   c   crew   01-03 00:00  claude     fetch   timeout x2      300     active            flag=true
#   d   crew   01-04 00:00  gpt-4o     -       -               40      00:01:00 (60 s)   -


def seed(db):
    ingest_events(db, [
        event("a", "session_start", agent_name="bot", timestamp="2026-01-01T00:00:00Z",
              metadata={"tier": "gold", "n": 2}),
        event("a", model="gpt-4o", tokens_in=10, tokens_out=5, timestamp="2026-01-01T00:00:02Z"),
        event("a", "tool_call", tool_call={"name": "search"}, timestamp="2026-01-01T00:00:03Z"),
        event("a", "session_end", status="completed", timestamp="2026-01-01T00:00:10Z"),
        event("b", "session_start", agent_name="bot", timestamp="2026-01-02T00:00:00Z", metadata={"tier": "free"}),
        event("b", "tool_error", tool_call={"name": "search", "error": "503"}, timestamp="2026-01-02T00:00:00.500Z"),
        event("b", "session_end", status="error", timestamp="2026-01-02T00:00:01Z"),
        event("c", "session_start", agent_name="crew", timestamp="2026-01-03T00:00:00Z", metadata={"flag": True}),
        event("c", model="claude", tokens_in=200, tokens_out=100, timestamp="2026-01-03T00:00:01Z"),
        event("c", "tool_call", tool_call={"name": "fetch"}, timestamp="2026-01-03T00:00:02Z"),
        event("c", "timeout", timestamp="2026-01-03T00:00:03Z"),
        event("c", "timeout", timestamp="2026-01-03T00:00:04Z"),
        event("d", "session_start", agent_name="crew", timestamp="2026-01-04T00:00:00Z"),
        event("d", model="gpt-4o", tokens_in=30, tokens_out=10, timestamp="2026-01-04T00:00:30Z"),
        event("d", "session_end", status="completed", timestamp="2026-01-04T00:01:00Z"),
    ])
    housekeeping.tag_session(db, "c", {"team": "research"})
    housekeeping.tag_session(db, "a", {"team": "research"})


def ids(db, **filters):
    page = list_sessions(db, **filters)
    return [s["session_id"] for s in page["sessions"]], page["total"]


@pytest.mark.parametrize("filters, expected", [
    ({}, ["d", "c", "b", "a"]),
    ({"agent": ["bot"]}, ["b", "a"]),
    ({"agent": ["bot", "crew"], "status": "completed"}, ["d", "a"]),
    ({"model": "gpt-4o"}, ["d", "a"]),
    ({"model": ["claude", "nope"]}, ["c"]),
    ({"tool": "search"}, ["b", "a"]),
    ({"tool": "search", "model": "gpt-4o"}, ["a"]),
    ({"error_type": "timeout"}, ["c"]),
    ({"error_type": ["tool_error", "timeout"]}, ["c", "b"]),
    ({"has_errors": True}, ["c", "b"]),
    ({"has_errors": False}, ["d", "a"]),
    ({"min_tokens": 15}, ["d", "c", "a"]),
    ({"min_tokens": 15, "max_tokens": 40}, ["d", "a"]),
    ({"max_tokens": 0}, ["b"]),
    ({"since": "2026-01-02T00:00:00Z"}, ["d", "c", "b"]),
    ({"from_": "2026-01-02T00:00:00Z", "to": "2026-01-04T00:00:00Z"}, ["c", "b"]),
    ({"since": "2d", "to": "2026-01-04T00:00:00Z"}, ["c", "b"]),
    ({"tag": "team:research"}, ["c", "a"]),
    ({"tag": "team=research", "has_errors": True}, ["c"]),
    ({"metadata": "tier=gold"}, ["a"]),
    ({"metadata": ["tier=gold", "n=2"]}, ["a"]),
    ({"metadata": "n:3"}, []),
    ({"metadata": "flag=true"}, ["c"]),
])
def test_each_filter_keeps_the_sessions_it_names(db, filters, expected):
    seed(db)
    assert ids(db, **filters) == (expected, len(expected))


@pytest.mark.parametrize("sort, expected", [
    ("start", ["a", "b", "c", "d"]),
    ("-start", ["d", "c", "b", "a"]),
    ("-tokens", ["c", "d", "a", "b"]),
    ("tokens", ["b", "a", "d", "c"]),
    # durations 10 s, 1 s, 60 s; c is active (no duration): last when the longest come first
    ("-duration", ["d", "a", "b", "c"]),
    ("duration", ["c", "b", "a", "d"]),
    # errors 0, 1, 2, 0: ties in session_id order
    ("-errors", ["c", "b", "a", "d"]),
    ("errors", ["a", "d", "b", "c"]),
])
def test_sorts(db, sort, expected):
    seed(db)
    assert ids(db, sort=sort)[0] == expected


@pytest.mark.parametrize("sort", ["-start", "tokens", "-duration", "errors"])
def test_the_cursor_walks_every_session_once_in_order(db, sort):
    seed(db)
    everything = ids(db, sort=sort)[0]
    seen, cursor = [], None
    for _ in range(4):
        page = list_sessions(db, sort=sort, limit=1, cursor=cursor)
        assert page["total"] == 4
        seen += [s["session_id"] for s in page["sessions"]]
        cursor = page["next"]
    assert seen == everything and cursor is None


def test_the_cursor_keeps_the_filters_order_and_a_last_short_page(db):
    seed(db)
    first = list_sessions(db, agent="crew", sort="-tokens", limit=1)
    assert [s["session_id"] for s in first["sessions"]] == ["c"] and first["next"]
    last = list_sessions(db, agent="crew", sort="-tokens", limit=5, cursor=first["next"])
    assert [s["session_id"] for s in last["sessions"]] == ["d"] and last["next"] is None


def test_offset_still_pages(db):
    seed(db)
    assert ids(db, limit=2, offset=1) == (["c", "b"], 4)
    assert list_sessions(db, limit=2, offset=2)["next"] is None


@pytest.mark.parametrize("filters, message", [
    ({"sort": "size"}, "sort must be one of start, duration, tokens, errors, cost"),
    ({"min_cost": -0.5}, "min_cost must be a number of USD from 0"),
    ({"max_cost": True}, "max_cost must be a number of USD from 0"),
    ({"sort": "--tokens"}, "sort must be one of"),
    ({"since": "yesterday"}, "since must be an ISO 8601 time or an age like 2h"),
    ({"from_": "2h"}, "from must be an ISO 8601 time"),
    ({"since": "2h", "from_": "2026-01-01T00:00:00Z"}, "not both"),
    ({"from_": "2026-01-05T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "must be before its end"),
    ({"min_tokens": 50, "max_tokens": 10}, "min_tokens (50) must not be above max_tokens (10)"),
    ({"min_tokens": -1}, "min_tokens must be an integer from 0"),
    ({"metadata": "tier"}, "metadata must be key=value"),
    ({"metadata": "bad key=1"}, "metadata key must be letters"),
    ({"agent": [""]}, "agent must be a text of 1 to 256 characters"),
    ({"status": "paused"}, "status must be one of active, completed, error"),
    ({"cursor": "not a cursor"}, "cursor is not one this list gave"),
    ({"cursor": "bm9wZQ"}, "cursor is not one this list gave"),
])
def test_bad_filters_name_the_problem(db, filters, message):
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        list_sessions(db, **filters)


def test_a_cursor_is_refused_with_another_sort_or_an_offset(db):
    seed(db)
    cursor = list_sessions(db, sort="-tokens", limit=1)["next"]
    with pytest.raises(InvalidInput, match="continues a list sorted by '-tokens'"):
        list_sessions(db, sort="tokens", cursor=cursor)
    with pytest.raises(InvalidInput, match="give cursor or offset, not both"):
        list_sessions(db, sort="-tokens", cursor=cursor, offset=1)


def test_cli_json_equals_the_api_body_with_every_filter(db, cli, client):
    seed(db)
    args = ["--agent", "crew", "--agent", "bot", "--model", "gpt-4o", "--min-tokens", "1", "--no-errors",
            "--since", "2026-01-01T00:00:00Z", "--to", "2026-01-05T00:00:00Z", "--sort=-tokens", "--limit", "1"]
    query = ("agent=crew&agent=bot&model=gpt-4o&min_tokens=1&has_errors=false&since=2026-01-01T00:00:00Z"
             "&to=2026-01-05T00:00:00Z&sort=-tokens&limit=1")
    local = json.loads(cli("sessions", "list", *args, "--json").stdout)
    assert local == client.get(f"/sessions?{query}").get_json()
    assert [s["session_id"] for s in local["sessions"]] == ["d"] and local["total"] == 2
    cursor = local["next"]
    after = json.loads(cli("sessions", "list", *args, "--cursor", cursor, "--json").stdout)
    assert after == client.get(f"/sessions?{query}&cursor={cursor}").get_json()
    assert [s["session_id"] for s in after["sessions"]] == ["a"] and after["next"] is None


def test_cli_tag_metadata_tool_and_error_type(db, cli):
    seed(db)
    out = cli("sessions", "list", "--tag", "team=research", "--metadata", "flag=true", "--tool", "fetch",
              "--error-type", "timeout", "--json")
    assert [s["session_id"] for s in json.loads(out.stdout)["sessions"]] == ["c"]


def test_cli_says_how_to_get_the_next_page_on_a_terminal(db, cli, terminal):
    seed(db)
    result = cli("sessions", "list", "--limit", "3")
    cursor = list_sessions(db, limit=3)["next"]
    assert result.stderr == f"more: --cursor {cursor}\n"
    assert cli("sessions", "list", "--limit", "4").stderr == ""  # the last page


def test_piped_cli_output_is_only_the_table(db, cli):
    seed(db)
    result = cli("sessions", "list", "--limit", "3")
    assert result.stderr == "" and len(result.stdout.splitlines()) == 4


@pytest.mark.parametrize("args, message", [
    (["--sort", "size"], "Invalid value for '--sort': sort must be one of start"),
    (["--since", "yesterday"], "Invalid value for '--since'"),
    (["--min-tokens", "9", "--max-tokens", "1"], "min_tokens (9) must not be above max_tokens (1)"),
    (["--has-errors", "--no-errors"], "give one of them, not both"),
    (["--cursor", "nope!"], "cursor is not one this list gave"),
    (["--metadata", "x"], "metadata must be key=value"),
    (["--min-cost", "lots"], "Invalid value for '--min-cost': min_cost must be a number of USD"),
    (["--min-cost", "nan"], "min_cost must be a number of USD"),
    (["--from", "2026-01-02T00:00:00Z", "--since", "1d"], "not both"),
])
def test_cli_bad_filters_are_usage_errors(db, cli, args, message):
    result = cli("sessions", "list", *args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize("query, message", [
    ("sort=size", "sort must be one of start, duration, tokens, errors, cost"),
    ("min_cost=x", "min_cost must be a number of USD from 0"),
    ("max_cost=-1", "max_cost must be a number of USD from 0"),
    ("min_cost=2&max_cost=1", "min_cost (2.0) must not be above max_cost (1.0)"),
    ("since=yesterday", "since must be an ISO 8601 time"),
    ("min_tokens=9&max_tokens=1", "min_tokens (9) must not be above max_tokens (1)"),
    ("cursor=abc", "cursor is not one this list gave"),
    ("has_errors=maybe", "has_errors"),
    ("min_tokens=x", "'min_tokens' must be an integer"),
    ("offset=5&cursor=WyJzdGFydCIsdHJ1ZSwiMjAyNi0wMS0wMlQwMDowMDowMC4wMDBaIiwiYiJd", "not both"),
])
def test_api_bad_filters_are_400(db, client, query, message):
    r = client.get(f"/sessions?{query}")
    assert r.status_code == 400 and message in r.get_json()["error"]


def test_the_remote_client_sends_every_list_filter():
    from obsctl.client import sessions as remote
    from obsctl.services.sessions.filters import LIST_PARAMS

    sent = {}

    class Client:
        def get_json(self, path, params):
            sent.update(params)
            return {}

    remote.list_sessions(Client(), agent="a", model="m", tool="t", error_type="timeout", tag="k=v",
                         metadata="x=1", min_tokens=1, max_tokens=2, min_cost="0.5", has_errors=False, since="2h",
                         to="2026-01-01T00:00:00Z", sort="-tokens", cursor="c", limit=5)
    assert {name: sent[name] for name in LIST_PARAMS} == {
        "agent": ["a"], "model": ["m"], "tool": ["t"], "error_type": ["timeout"], "tag": ["k:v"],
        "metadata": ["x:1"]}
    assert (sent["min_tokens"], sent["max_tokens"], sent["has_errors"], sent["since"], sent["to"], sent["sort"],
            sent["cursor"], sent["limit"]) == (1, 2, "false", "2h", "2026-01-01T00:00:00Z", "-tokens", "c", 5)
    assert (sent["min_cost"], sent["max_cost"]) == (0.5, None)


# Costs under the prices gpt-4o $1/$2 and claude $10/$30 per million tokens in/out:
#   a  10 in, 5 out of gpt-4o    = 0.00001 + 0.00001 = 0.00002
#   b  no call                    = null (unpriced: no cost filter matches it)
#   c  200 in, 100 out of claude = 0.002 + 0.003     = 0.005
#   d  30 in, 10 out of gpt-4o   = 0.00003 + 0.00002 = 0.00005
PRICES = {"gpt-4o": {"input_per_mtok": 1, "output_per_mtok": 2},
          "claude": {"input_per_mtok": 10, "output_per_mtok": 30}}


@pytest.fixture
def priced(db, tmp_path):
    from tests.conftest import use_prices

    use_prices(db, tmp_path, PRICES)
    seed(db)
    return db


@pytest.mark.parametrize("filters, expected", [
    ({"min_cost": 0.00003}, ["d", "c"]),
    ({"min_cost": "0.00001", "max_cost": 0.00006}, ["d", "a"]),
    ({"max_cost": 0}, []),
    ({"min_cost": 0}, ["d", "c", "a"]),
    ({"sort": "-cost"}, ["c", "d", "a", "b"]),  # unpriced last when the most expensive come first
    ({"sort": "cost"}, ["b", "a", "d", "c"]),
])
def test_cost_filters_and_sort(priced, filters, expected):
    assert ids(priced, **filters)[0] == expected
    costs = {s["session_id"]: s["cost_usd"] for s in list_sessions(priced)["sessions"]}
    assert costs == {"a": pytest.approx(0.00002), "b": None, "c": pytest.approx(0.005), "d": pytest.approx(0.00005)}


@pytest.mark.parametrize("sort", ["-cost", "cost"])
def test_the_cursor_walks_the_cost_order(priced, sort):
    everything = ids(priced, sort=sort)[0]
    seen, cursor = [], None
    for _ in range(4):
        page = list_sessions(priced, sort=sort, limit=1, cursor=cursor)
        seen += [s["session_id"] for s in page["sessions"]]
        cursor = page["next"]
    assert seen == everything and cursor is None


def test_cli_cost_filter_equals_the_api(priced, cli, client):
    local = json.loads(cli("sessions", "list", "--min-cost", "0.00003", "--sort=-cost", "--json").stdout)
    assert local == client.get("/sessions?min_cost=0.00003&sort=-cost").get_json()
    assert [s["session_id"] for s in local["sessions"]] == ["c", "d"]
