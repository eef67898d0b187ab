"""The session_stats rollup (analytics' session-level sections and the sessions list's total)
equals a recomputation over the sessions table after any mix of writes."""

import random

from obsctl.services.ingest import ingest_events
from obsctl.store.postgres.schema import SESSION_DURATION_MS as _PG_DURATION_MS
from obsctl.store.sqlite.analytics import _SESSION_DURATION_MS
from tests.conftest import event

# The backend's own duration expression (the one its analytics reads through the index).
_RECOMPUTED = """
SELECT substr(started_at, 1, 10), agent_name, status, COUNT(*), SUM(event_count),
       SUM(total_tokens_in), SUM(total_tokens_out), COUNT(ended_at),
       COALESCE(SUM(CASE WHEN ended_at IS NOT NULL THEN {duration} END), 0),
       COALESCE(SUM(cost_usd), 0), COUNT(cost_usd), SUM(unpriced_calls)
FROM sessions GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
"""
_COLUMNS = ("day, agent_name, status, sessions, events, tokens_in, tokens_out, ended, duration_sum, cost_usd, "
            "priced_sessions, unpriced_calls")
_KEPT = f"SELECT {_COLUMNS} FROM session_stats WHERE sessions <> 0 ORDER BY 1, 2, 3"


def _rows(db, sql: str) -> list[tuple]:
    """The rows, their cost (index 9, a sum of floats kept by adding and taking away) to 12 decimals."""
    return [(*row[:9], round(float(row[9]), 12), *row[10:]) for row in db.conn.execute(sql).fetchall()]


def _assert_exact(db):
    duration = _PG_DURATION_MS if db.backend == "postgresql" else _SESSION_DURATION_MS
    assert _rows(db, _KEPT) == _rows(db, _RECOMPUTED.format(duration=duration))
    # Groups whose sessions all moved elsewhere are left at zero in every column.
    assert db.conn.execute("SELECT COUNT(*) FROM session_stats WHERE sessions = 0 AND "
                           "(events <> 0 OR tokens_in <> 0 OR tokens_out <> 0 OR ended <> 0 "
                           "OR duration_sum <> 0 OR ABS(cost_usd) > 1e-12 OR priced_sessions <> 0 "
                           "OR unpriced_calls <> 0)").fetchone()[0] == 0


def _ts(day: int, second: int) -> str:
    return f"2026-03-{day:02d}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


def test_rollup_follows_every_change_of_a_session(db):
    # An event before the start moves the session a day back; a session_start names the
    # agent of a session first seen as 'unknown'; session_end changes the status and
    # sets the end; final token totals replace the sums.
    ingest_events(db, [event("s1", tokens_in=5, timestamp=_ts(2, 100))])
    _assert_exact(db)
    ingest_events(db, [event("s1", "session_start", agent_name="alpha", timestamp=_ts(2, 50))])
    _assert_exact(db)
    ingest_events(db, [event("s1", tokens_out=7, timestamp=_ts(1, 86_000))])
    _assert_exact(db)
    ingest_events(db, [event("s1", "session_end", status="error", total_tokens_in=99,
                             timestamp=_ts(2, 3_000))])
    _assert_exact(db)
    row = db.conn.execute("SELECT day, agent_name, status, sessions, events, tokens_in, tokens_out, ended, "
                          "duration_sum FROM session_stats WHERE sessions <> 0").fetchall()
    assert row == [("2026-03-01", "alpha", "error", 1, 4, 99, 7, 1, (86_400 - 86_000 + 3_000) * 1000)]


def test_rollup_equals_a_recomputation_after_random_writes_and_prunes(db):
    rng = random.Random(7)
    agents = ["alpha", "beta", "gamma"]
    for round_no in range(12):
        batch = []
        for _ in range(rng.randint(1, 40)):
            sid = f"s{rng.randrange(25)}"
            kind = rng.random()
            ts = _ts(rng.randint(1, 9), rng.randrange(86_400))
            if kind < 0.15:
                batch.append(event(sid, "session_start", agent_name=rng.choice(agents), timestamp=ts))
            elif kind < 0.3:
                batch.append(event(sid, "session_end", status=rng.choice(["completed", "error"]),
                                   timestamp=ts, **({"total_tokens_out": rng.randrange(999)}
                                                    if rng.random() < 0.3 else {})))
            else:
                # gpt-4o is priced, the other model is not, and tokens without a model are not.
                batch.append(event(sid, rng.choice(["llm_call", "tool_call", "error"]), timestamp=ts,
                                   tokens_in=rng.randrange(100), tokens_out=rng.randrange(100),
                                   agent_name=rng.choice(agents + [None]),
                                   model=rng.choice(["gpt-4o", "no-such-model", None])))
        ingest_events(db, batch)
        _assert_exact(db)
        if round_no % 4 == 3:
            db.maintenance.prune_batch(_ts(rng.randint(2, 9), 0), 5)  # a few inactive sessions
            _assert_exact(db)
    assert db.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] > 0
    priced, unpriced = db.conn.execute("SELECT SUM(priced_sessions), SUM(unpriced_calls) FROM session_stats").fetchone()
    assert priced > 0 and unpriced > 0
