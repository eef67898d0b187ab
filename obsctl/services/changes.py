"""Change detection: an agent's configuration changing, and what the change did to its LLM
latency, its cost and its errors.

A session's *configuration* is the model that spent most of its tokens (a tie goes to the
model name first in order) and the `release` (else `version`) of its metadata, when it has
one. A session with neither has no configuration and is left out of detection. Two
configurations match when their models match and their releases match, a missing part
matching anything (a release appearing in the metadata is not a change).

A *change* is the first session of a configuration that none of the agent's sessions of the
previous 7 days matches, when at least 3 sessions with a configuration ran in those days:
an agent that alternates two models, or rolls back to a release of the last week, makes no
change. It compares the sessions *before* it (the agent's sessions of the 7 days before the
change, the most recent 200) with the sessions *after* it (the new configuration's sessions
from the change on, the first 200) on:

- `llm_p50_ms`: the median duration of the successful llm_call events;
- `cost_per_session_usd`: the median priced cost of a session (unpriced sessions left out);
- `error_event_rate`: percent of the body events that are errors (services/rates.py).

A metric *regressed* when after >= 1.5x before and by at least 250 ms (latency), after >= 2x
before and by at least $0.01 (cost), after >= before + 5 points and >= 1.5x before (error
rate); it *improved* by the same margins the other way. A change with a regressed metric is
a regression until it is acknowledged (`obsctl changes ack ID`): until then triage judges the
new configuration's sessions against the sessions before the change, so a regression never
becomes the agent's baseline, and the agent's scorecard counts it. With fewer than 3 sessions
after it, a change is provisional.

The change id is `AGENT@CHANGED_AT` (the first session's start): acknowledging checks that a
change starts there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from statistics import median
from typing import Any

import orjson

from obsctl.errors import InvalidInput, NotFound
from obsctl.models.changes import LIMIT
from obsctl.services.pricing import priced_total
from obsctl.services.windows import window
from obsctl.store import Store
from obsctl.timeutil import format_ts, normalize_ts, now_iso, parse_ts

DEFAULT_SINCE = "7d"
LOOKBACK = timedelta(days=7)
MIN_BEFORE = 3
MIN_AFTER = 3
SEGMENT_CAP = 200
RELEASE_KEYS = ("release", "version")
NOTE_CHARS = 500

LATENCY_RATIO, LATENCY_MIN_MS = 1.5, 250.0
COST_RATIO, COST_MIN_USD = 2.0, 0.01
ERROR_RATE_POINTS, ERROR_RATE_RATIO = 5.0, 1.5
METRICS = ("llm_p50_ms", "cost_per_session_usd", "error_event_rate")


@dataclass(frozen=True, slots=True)
class Config:
    model: str | None
    release: str | None

    def matches(self, other: Config) -> bool:
        return (self.model is None or other.model is None or self.model == other.model) and (
            self.release is None or other.release is None or self.release == other.release)

    def view(self) -> dict:
        return {"model": self.model, "release": self.release}


@dataclass(slots=True)
class Run:
    """One session as change detection sees it."""

    session_id: str
    started_at: str
    config: Config | None
    body_events: int
    error_events: int
    usage: list = field(default_factory=list)  # (model, tokens_in, tokens_out, cache read, cache write, reasoning)


def release_of(metadata: Any) -> str | None:
    """The `release` (else `version`) of a session's metadata (an object or its JSON text)."""
    if isinstance(metadata, (str, bytes)):
        try:
            metadata = orjson.loads(metadata)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(metadata, dict):
        return None
    for key in RELEASE_KEYS:
        value = metadata.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return None


def config_of(usage, release: str | None) -> Config | None:
    """The configuration of a session from its (model, tokens_in, tokens_out, ...) usage."""
    tokens: dict[str, int] = {}
    for model, tokens_in, tokens_out, *_ in usage:
        if model is not None:
            tokens[model] = tokens.get(model, 0) + (tokens_in or 0) + (tokens_out or 0)
    model = max(sorted(tokens), key=tokens.__getitem__) if tokens else None
    if model is None and release is None:
        return None
    return Config(model, release)


@dataclass
class Change:
    agent: str
    at: int  # index of the first session of the new configuration in the agent's runs
    before: list[Run]  # the 7 days before it, oldest first
    old: Config
    new: Config


def detect(agent: str, runs: list[Run]) -> list[Change]:
    """The changes in one agent's runs (oldest first); see the module docstring. One pass: the
    configurations of the last 7 days are counted as the window slides."""
    changes: list[Change] = []
    start = 0  # first run within LOOKBACK of the current one
    times = [parse_ts(r.started_at) for r in runs]
    window: Counter = Counter()  # configurations of runs[start:i]
    for i, run in enumerate(runs):
        while times[start] < times[i] - LOOKBACK:
            gone = runs[start].config
            if gone is not None:
                window[gone] -= 1
                if not window[gone]:
                    del window[gone]
            start += 1
        if run.config is None:
            continue
        if window.total() >= MIN_BEFORE and not any(run.config.matches(c) for c in window):
            prior = runs[start:i]
            seen = [p.config for p in prior if p.config is not None]
            old = max(reversed(seen), key=window.__getitem__)  # most common; ties: most recent
            changes.append(Change(agent, i, prior[-SEGMENT_CAP:], old, run.config))
        window[run.config] += 1
    return changes


def _ratio_worse(before: float, after: float, ratio: float, floor: float) -> bool:
    return after >= ratio * before and after - before >= floor


def verdict(metric: str, before: float | None, after: float | None) -> str | None:
    """regression, improvement or unchanged for one metric; None when a side has no data."""
    if before is None or after is None:
        return None
    if metric == "llm_p50_ms":
        worse = _ratio_worse(before, after, LATENCY_RATIO, LATENCY_MIN_MS)
        better = _ratio_worse(after, before, LATENCY_RATIO, LATENCY_MIN_MS)
    elif metric == "cost_per_session_usd":
        worse = _ratio_worse(before, after, COST_RATIO, COST_MIN_USD)
        better = _ratio_worse(after, before, COST_RATIO, COST_MIN_USD)
    else:
        worse = after >= before + ERROR_RATE_POINTS and after >= ERROR_RATE_RATIO * before
        better = before >= after + ERROR_RATE_POINTS and before >= ERROR_RATE_RATIO * after
    return "regression" if worse else "improvement" if better else "unchanged"


def segment(store: Store, runs: list[Run], pricer) -> dict:
    """The three metrics (and their counts) of some sessions."""
    durations = store.changes.llm_durations([r.session_id for r in runs])
    costs = [c for c in (priced_total(r.usage, pricer)[0] for r in runs) if c is not None]
    body = sum(r.body_events for r in runs)
    errors = sum(r.error_events for r in runs)
    return {
        "sessions": len(runs),
        "first_session_id": runs[0].session_id if runs else None,
        "last_session_id": runs[-1].session_id if runs else None,
        "llm_calls": len(durations),
        "llm_p50_ms": round(median(durations), 3) if durations else None,
        "priced_sessions": len(costs),
        "cost_per_session_usd": round(median(costs), 6) if costs else None,
        "body_events": body,
        "error_events": errors,
        "error_event_rate": round(100.0 * errors / body, 2) if body else None,
    }


def id_of(agent: str, changed_at: str) -> str:
    return f"{agent}@{changed_at}"


def describe(change: dict) -> str:
    """`model claude-3-haiku -> claude-3-opus: LLM p50 1.06 s -> 8.6 s (8.1x), ...`."""
    old, new = change["from"], change["to"]
    what = []
    if old["model"] != new["model"] and new["model"] is not None:
        what.append(f"model {old['model'] or '?'} -> {new['model']}")
    if old["release"] != new["release"] and new["release"] is not None:
        what.append(f"release {old['release'] or '?'} -> {new['release']}")
    parts = []
    before, after = change["before"], change["after"]
    for metric in METRICS:
        b, a = before[metric], after[metric]
        if b is None or a is None:
            continue
        times = ""
        if b and a and metric != "error_event_rate" and change["metrics"][metric] != "unchanged":
            times = f" ({a / b:.1f}x)" if a >= b else f" ({b / a:.1f}x less)"
        parts.append(f"{LABELS[metric]} {show_value(metric, b)} -> {show_value(metric, a)}{times}")
    return (", ".join(what) or "configuration changed") + (": " + ", ".join(parts) if parts else "")


LABELS = {"llm_p50_ms": "LLM p50", "cost_per_session_usd": "cost per session",
          "error_event_rate": "error rate"}


def show_value(metric: str, value: float) -> str:
    if metric == "llm_p50_ms":
        return f"{value:,.0f} ms" if value < 1000 else f"{value / 1000:,.2f} s"
    if metric == "cost_per_session_usd":
        return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
    return f"{value:g}%"


def evaluate(store: Store, change: Change, after: list[Run], pricer, acks: dict) -> dict:
    """The view of one detected change with its before and after sides."""
    first = after[0]
    before_side, after_side = segment(store, change.before, pricer), segment(store, after, pricer)
    metrics = {m: verdict(m, before_side[m], after_side[m]) for m in METRICS}
    if "regression" in metrics.values():
        status = "regression"
    elif "improvement" in metrics.values():
        status = "improvement"
    else:
        status = "neutral"
    cid = id_of(change.agent, first.started_at)
    ack = acks.get(cid)
    view = {
        "change_id": cid,
        "agent_name": change.agent,
        "changed_at": first.started_at,
        "first_session_id": first.session_id,
        "from": change.old.view(),
        "to": change.new.view(),
        "status": status,
        "provisional": len(after) < MIN_AFTER,
        "acknowledged": ack is not None,
        "acknowledged_at": ack["acknowledged_at"] if ack else None,
        "note": ack["note"] if ack else None,
        "metrics": metrics,
        "before": before_side,
        "after": after_side,
    }
    view["title"] = describe(view)
    return view


def _runs(store: Store, agent: str | None, since: str, until: str) -> dict[str, list[Run]]:
    """The runs of each agent whose sessions started in [since, until), oldest first."""
    usage: dict[str, list] = {}
    for session_id, model, *tokens in store.changes.window_model_tokens(agent, since, until):
        usage.setdefault(session_id, []).append((model, *tokens))
    runs: dict[str, list[Run]] = {}
    for row in store.changes.window_sessions(agent, since, until):
        own = usage.get(row["session_id"], [])
        runs.setdefault(row["agent_name"], []).append(Run(
            row["session_id"], row["started_at"], config_of(own, release_of(row["metadata"])),
            row["body_events"], row["error_events"], own))
    return runs


def find_changes(store: Store, pricer, *, agent: str | None, since: str, until: str) -> list[dict]:
    """The changes that started in [since, until), each measured up to `until`."""
    lookback = format_ts(parse_ts(since) - LOOKBACK)
    with store.read_snapshot():
        by_agent = _runs(store, agent, lookback, until)
        found = []
        for name, runs in by_agent.items():
            for change in detect(name, runs):
                if runs[change.at].started_at < since:
                    continue
                after = [r for r in runs[change.at:]
                         if r.config is not None and r.config.matches(change.new)][:SEGMENT_CAP]
                found.append((change, after))
        acks = store.changes.acknowledged([id_of(c.agent, a[0].started_at) for c, a in found])
        return [evaluate(store, c, a, pricer, acks) for c, a in found]


def is_open_regression(change: dict) -> bool:
    return change["status"] == "regression" and not change["acknowledged"]


def list_changes(store: Store, *, pricer, since: str | None = None, until: str | None = None,
                 agent: str | None = None, limit: int | None = None) -> dict:
    """Changes of agents' configurations that started in the window (an age like 7d or an
    ISO 8601 time, default 7d; until default now): unacknowledged regressions first, then
    newest first."""
    limit = LIMIT.check(limit)
    start, end = window(since if since is not None else DEFAULT_SINCE, until)
    changes = sorted(find_changes(store, pricer, agent=agent or None, since=start, until=end),
                     key=lambda c: (c["changed_at"], c["agent_name"]), reverse=True)
    changes.sort(key=lambda c: not is_open_regression(c))  # stable: newest first within each
    return {"since": start, "until": end, "total": len(changes), "changes": changes[:limit]}


def parse_change_id(text: str) -> tuple[str, str]:
    """(agent, changed_at) of `AGENT@CHANGED_AT`, else InvalidInput."""
    agent, sep, at = (text or "").rpartition("@")
    try:
        if not sep or not agent:
            raise ValueError
        at_ts = normalize_ts(at)
    except (ValueError, TypeError):
        raise InvalidInput(f"change id {text!r} is not AGENT@TIME, as `obsctl changes` lists it") from None
    return agent, at_ts


def acknowledge_change(store: Store, change_id: str, *, pricer, note: str | None = None) -> dict:
    """Acknowledge a change (NotFound when no change of that agent starts at that time): its
    new configuration becomes the agent's baseline. A second acknowledgement keeps the first."""
    agent, at = parse_change_id(change_id)
    if note is not None and len(note) > NOTE_CHARS:
        raise InvalidInput(f"note: at most {NOTE_CHARS} characters")
    after = format_ts(parse_ts(at) + timedelta(milliseconds=1))
    found = [c for c in find_changes(store, pricer, agent=agent, since=at, until=after)
             if c["changed_at"] == at]
    if not found:
        raise NotFound(f"no change of agent {agent!r} starts at {at}")
    store.run_write(lambda s: s.changes.acknowledge(id_of(agent, at), agent, at, now_iso(), note))
    current = find_changes(store, pricer, agent=agent, since=at, until=now_iso())
    return next((c for c in current if c["changed_at"] == at), found[0])
