"""Cost analysis with the pricing module: per model, per event type, on failed steps.

A model without a price is unpriced: its tokens are counted in `unpriced_tokens` and the
model is named in `unpriced_models`; it never counts as $0. A total is null only when tokens
were spent and none of them could be priced; a group that spent no tokens costs 0.
"""

from __future__ import annotations

from obsctl.services.pricing import USD_DECIMALS, priced_total  # noqa: F401 (re-exported)


def _usage_by(steps, key) -> dict:
    """{key(step): {(model): [calls, tokens_in, tokens_out]}} over non-lifecycle steps."""
    groups: dict = {}
    for step in steps:
        if step.lifecycle:
            continue
        models = groups.setdefault(key(step), {})
        entry = models.setdefault(step.model, [0, 0, 0])
        entry[0] += 1
        entry[1] += step.tokens_in or 0
        entry[2] += step.tokens_out or 0
    return groups


def cost_by_model(steps, pricer) -> list[dict]:
    """Per model (null = events without a model): calls, tokens and cost, most tokens first.

    Events without a model are listed only when they spent tokens."""
    rows = []
    for model, calls_and_tokens in _usage_by(steps, lambda s: s.model).items():
        calls, tokens_in, tokens_out = calls_and_tokens[model]
        if model is None and tokens_in + tokens_out == 0:
            continue
        cost, _ = priced_total([(model, tokens_in, tokens_out)], pricer)
        rows.append({"model": model, "calls": calls, "tokens_in": tokens_in, "tokens_out": tokens_out,
                     "cost_usd": cost, "priced": model is not None and pricer.price(model) is not None})
    return sorted(rows, key=lambda r: (-(r["tokens_in"] + r["tokens_out"]), r["model"] or ""))


def cost_by_event_type(steps, pricer) -> list[dict]:
    """Per event type: events, tokens, cost and unpriced tokens, most tokens first."""
    rows = []
    for event_type, models in _usage_by(steps, lambda s: s.event_type).items():
        usage = [(m, v[1], v[2]) for m, v in models.items()]
        cost, unpriced = priced_total(usage, pricer)
        tokens_in = sum(u[1] for u in usage)
        tokens_out = sum(u[2] for u in usage)
        rows.append({"event_type": event_type, "events": sum(v[0] for v in models.values()),
                     "tokens_in": tokens_in, "tokens_out": tokens_out, "cost_usd": cost,
                     "unpriced_tokens": unpriced})
    return sorted(rows, key=lambda r: (-(r["tokens_in"] + r["tokens_out"]), r["event_type"]))


def failed_steps_cost(steps, pricer) -> dict:
    """Tokens and cost spent on error events, and their share of all tokens (percent)."""
    failed = [s for s in steps if s.is_error and not s.lifecycle]
    tokens_in = sum(s.tokens_in or 0 for s in failed)
    tokens_out = sum(s.tokens_out or 0 for s in failed)
    all_tokens = sum((s.tokens_in or 0) + (s.tokens_out or 0) for s in steps if not s.lifecycle)
    cost, _ = priced_total([(s.model, s.tokens_in, s.tokens_out) for s in failed], pricer)
    share = round(100.0 * (tokens_in + tokens_out) / all_tokens, 2) if all_tokens else 0.0
    return {"events": len(failed), "tokens_in": tokens_in, "tokens_out": tokens_out,
            "total_tokens": tokens_in + tokens_out, "cost_usd": cost, "token_share_pct": share}


def cost_summary(steps, pricer) -> dict:
    """The triage report's `cost` section."""
    by_model = cost_by_model(steps, pricer)
    total, unpriced_tokens = priced_total(
        [(r["model"], r["tokens_in"], r["tokens_out"]) for r in by_model], pricer)
    return {
        "total_usd": total,
        "by_model": by_model,
        "unpriced_models": sorted(r["model"] for r in by_model if r["model"] and not r["priced"]),
        "unpriced_tokens": unpriced_tokens,
        "failed_steps": failed_steps_cost(steps, pricer),
    }
