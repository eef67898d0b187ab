"""Cost analysis with the pricing module: per model, per event type, on failed steps.

Everything is computed from usage rows, `(event_type, model, is_error, events, tokens_in,
tokens_out, cache_read, cache_write, reasoning)` over a session's body events (lifecycle events
left out), which a short session adds up from its events and a long one reads aggregated from SQL.

A model without a price is unpriced: its tokens are counted in `unpriced_tokens` and the
model is named in `unpriced_models`; it never counts as $0. A total is null only when tokens
were spent and none of them could be priced; a group that spent no tokens costs 0.
"""

from __future__ import annotations

from collections.abc import Iterable

from obsctl.services.pricing import USD_DECIMALS, priced_total  # noqa: F401 (re-exported)


def usage_rows(items: Iterable[tuple]) -> list[tuple]:
    """(event_type, model, is_error, events, tokens_in, tokens_out, cache_read, cache_write,
    reasoning) items added up per (event_type, model, is_error), in order of first appearance."""
    groups: dict[tuple, list[int]] = {}
    for event_type, model, is_error, *counts in items:
        entry = groups.get((event_type, model, bool(is_error)))
        if entry is None:
            entry = groups[(event_type, model, bool(is_error))] = [0] * 6
        for i, count in enumerate(counts):
            entry[i] += count or 0
    return [(*key, *totals) for key, totals in groups.items()]


def model_usage(usage: list[tuple]) -> list[tuple]:
    """(model, tokens_in, tokens_out, cache_read, cache_write, reasoning) per model that spent
    tokens, for the baseline."""
    models: dict[str | None, list[int]] = {}
    for row in usage:
        if row[4] + row[5] > 0:
            entry = models.setdefault(row[1], [0] * 5)
            for i, count in enumerate(row[4:9]):
                entry[i] += count
    return [(model, *counts) for model, counts in models.items()]


def _usage_by(usage: list[tuple], key) -> dict:
    """{key(row): {model: [events, tokens_in, tokens_out, cache_read, cache_write, reasoning]}}."""
    groups: dict = {}
    for row in usage:
        models = groups.setdefault(key(row), {})
        entry = models.setdefault(row[1], [0] * 6)
        for i, count in enumerate(row[3:9]):
            entry[i] += count
    return groups


def cost_by_model(usage: list[tuple], pricer) -> list[dict]:
    """Per model (null = events without a model): calls, tokens and cost, most tokens first.

    Events without a model are listed only when they spent tokens."""
    rows = []
    for model, calls_and_tokens in _usage_by(usage, lambda r: r[1]).items():
        calls, tokens_in, tokens_out, *parts = calls_and_tokens[model]
        if model is None and tokens_in + tokens_out == 0:
            continue
        cost, _ = priced_total([(model, tokens_in, tokens_out, *parts)], pricer)
        rows.append({"model": model, "calls": calls, "tokens_in": tokens_in, "tokens_out": tokens_out,
                     "cost_usd": cost, "priced": model is not None and pricer.price(model) is not None})
    return sorted(rows, key=lambda r: (-(r["tokens_in"] + r["tokens_out"]), r["model"] or ""))


def cost_by_event_type(usage: list[tuple], pricer) -> list[dict]:
    """Per event type: events, tokens, cost and unpriced tokens, most tokens first."""
    rows = []
    for event_type, models in _usage_by(usage, lambda r: r[0]).items():
        items = [(m, *v[1:]) for m, v in models.items()]
        cost, unpriced = priced_total(items, pricer)
        tokens_in = sum(u[1] for u in items)
        tokens_out = sum(u[2] for u in items)
        rows.append({"event_type": event_type, "events": sum(v[0] for v in models.values()),
                     "tokens_in": tokens_in, "tokens_out": tokens_out, "cost_usd": cost,
                     "unpriced_tokens": unpriced})
    return sorted(rows, key=lambda r: (-(r["tokens_in"] + r["tokens_out"]), r["event_type"]))


def failed_steps_cost(usage: list[tuple], pricer) -> dict:
    """Tokens and cost spent on error events, and their share of all tokens (percent)."""
    failed = [r for r in usage if r[2]]
    tokens_in = sum(r[4] for r in failed)
    tokens_out = sum(r[5] for r in failed)
    all_tokens = sum(r[4] + r[5] for r in usage)
    cost, _ = priced_total([(r[1], *r[4:9]) for r in failed], pricer)
    share = round(100.0 * (tokens_in + tokens_out) / all_tokens, 2) if all_tokens else 0.0
    return {"events": sum(r[3] for r in failed), "tokens_in": tokens_in, "tokens_out": tokens_out,
            "total_tokens": tokens_in + tokens_out, "cost_usd": cost, "token_share_pct": share}


def cost_summary(usage: list[tuple], pricer) -> dict:
    """The triage report's `cost` section."""
    by_model = cost_by_model(usage, pricer)
    per_model = _usage_by(usage, lambda r: None).get(None, {})
    total, unpriced_tokens = priced_total([(model, *v[1:]) for model, v in per_model.items()], pricer)
    return {
        "total_usd": total,
        "by_model": by_model,
        "unpriced_models": sorted(r["model"] for r in by_model if r["model"] and not r["priced"]),
        "unpriced_tokens": unpriced_tokens,
        "failed_steps": failed_steps_cost(usage, pricer),
    }
