"""Token prices: what a model's tokens cost in USD.

Interface (used by metrics, triage, postmortems and SLA checks):

- `Pricer(overrides_path=None)`: a price table. Operator overrides (a JSON file
  `{model: {"input_per_mtok": x, "output_per_mtok": y}}`, prices in USD per million tokens)
  win over the bundled data of the `genai-prices` package (offline, no network).
  A bad overrides file raises InvalidInput naming the file and the problem.
- `pricer.price(model) -> ModelPrice | None`: per-token prices and their `source`
  ('override' or 'genai-prices'); None when the model is None or has no known price.
- `pricer.cost(model, tokens_in, tokens_out) -> float | None`: USD cost; None when unpriced.
  A model without a price is unpriced (None), never $0.
- `pricer.version -> str`: which price table this is (the genai-prices version, plus the
  overrides file's digest), recorded with the costs stored at ingest.
- `pricer_for(settings) -> Pricer`: the pricer configured by `OBSCTL_PRICES`.
- `pricer_of(store) -> Pricer`: the pricer ingest uses on a store (the one of the settings the
  store was opened with, by services.storage.open_store; genai-prices alone otherwise).

Each model is looked up once per Pricer and cached, including misses. Override names match
case-insensitively, like genai-prices' own model matching; `provider/model` names are
understood.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from obsctl.errors import InvalidInput

_PER_MTOK = 1_000_000
# genai-prices applies tiers ("cliff" pricing above e.g. 200k input tokens); asking for a small
# usage gives the base per-token rate, which is what a per-event cost needs.
_PROBE_TOKENS = 1000


@dataclass(frozen=True)
class ModelPrice:
    """Per-token USD prices of one model and where they came from."""

    input_per_token: float
    output_per_token: float
    source: str  # 'override' or 'genai-prices'


class Pricer:
    """A cached price table: overrides first, then genai-prices' bundled data."""

    def __init__(self, overrides_path: Path | None = None):
        self.overrides_path = overrides_path
        self._digest = _file_digest(overrides_path) if overrides_path is not None else ""
        self._overrides = load_overrides(overrides_path) if overrides_path is not None else {}
        self._cache: dict[str, ModelPrice | None] = {}
        self._version: str | None = None

    @property
    def version(self) -> str:
        """The price table's version: `genai-prices X.Y.Z`, plus `+ overrides sha256:...` (the
        first 12 hex digits of the overrides file's digest) when there is one."""
        if self._version is None:
            from importlib.metadata import PackageNotFoundError
            from importlib.metadata import version as package_version

            try:
                version = f"genai-prices {package_version('genai-prices')}"
            except PackageNotFoundError:
                version = "genai-prices (not installed)"
            if self.overrides_path is not None:
                version += f" + overrides sha256:{self._digest}"
            self._version = version
        return self._version

    def price(self, model: str | None) -> ModelPrice | None:
        """The per-token prices of `model`, or None when it is None or unpriced."""
        if not model:
            return None
        try:
            return self._cache[model]
        except KeyError:
            pass
        found = self._overrides.get(model.lower()) or _library_price(model)
        self._cache[model] = found
        return found

    def cost(self, model: str | None, tokens_in: int | None, tokens_out: int | None) -> float | None:
        """USD cost of one call (missing token counts count as 0); None when unpriced."""
        price = self.price(model)
        if price is None:
            return None
        return (tokens_in or 0) * price.input_per_token + (tokens_out or 0) * price.output_per_token


def usd(value: float | None) -> float | None:
    """A stored cost (or a sum of them) as shown: to 8 decimals, which a sum's binary noise
    (0.30000000000000004) does not reach; None (unpriced) stays None."""
    return None if value is None else round(value, 8)


def format_usd(value: float) -> str:
    """A cost for people: cents from $1 up, 4 decimals from a cent, 6 below (`$12.34`,
    `$0.0250`, `$0.000375`)."""
    size = abs(value)
    digits = 2 if size >= 1 or size == 0 else 4 if size >= 0.01 else 6
    return f"{'-' if value < 0 else ''}${size:,.{digits}f}"


def pricer_for(settings) -> Pricer:
    """The pricer of a Settings object (`OBSCTL_PRICES` overrides when set)."""
    return Pricer(getattr(settings, "prices_path", None))


def pricer_of(store) -> Pricer:
    """The pricer that costs the events stored in `store` (kept on the store, so each model is
    looked up once per store, not once per batch)."""
    pricer = getattr(store, "pricer", None)
    if pricer is None:
        pricer = store.pricer = Pricer(getattr(store, "prices_path", None))
    return pricer


def _file_digest(path: Path) -> str:
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
    except OSError:
        return ""  # load_overrides says what is wrong with the file


def load_overrides(path: Path) -> dict[str, ModelPrice]:
    """Read and validate an overrides file; keys are lower-cased model names."""
    import orjson

    where = f"OBSCTL_PRICES file {str(path)!r}"
    try:
        data = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise InvalidInput(f"cannot read the {where}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"the {where} is not valid JSON: {exc}") from None
    if type(data) is not dict:
        raise InvalidInput(
            f'the {where} must be a JSON object {{"model": {{"input_per_mtok": x, "output_per_mtok": y}}}}'
        )
    prices: dict[str, ModelPrice] = {}
    for model, entry in data.items():
        if type(entry) is not dict:
            raise InvalidInput(f"{where}: the entry for {model!r} must be an object with "
                               f"input_per_mtok and output_per_mtok")
        per_token = []
        for key in ("input_per_mtok", "output_per_mtok"):
            value = entry.get(key)
            if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
                raise InvalidInput(f"{where}: {model!r}.{key} must be a non-negative number "
                                   f"(USD per million tokens), got {value!r}")
            per_token.append(value / _PER_MTOK)
        prices[model.lower()] = ModelPrice(per_token[0], per_token[1], "override")
    return prices


def _library_price(model: str) -> ModelPrice | None:
    """Ask genai-prices (imported lazily: it takes ~0.5 s) for the base per-token rates.

    A `provider/model` name (LiteLLM and OpenRouter style) is looked up as that model of
    that provider when the whole name is unknown.
    """
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=_PROBE_TOKENS, output_tokens=_PROBE_TOKENS)
    try:
        calc = calc_price(usage, model)
    except Exception:  # noqa: BLE001 - any lookup or data problem means "no known price"
        provider, _, name = model.partition("/")
        if not name:
            return None
        try:
            calc = calc_price(usage, name, provider_id=provider)
        except Exception:  # noqa: BLE001
            return None
    return ModelPrice(float(calc.input_price) / _PROBE_TOKENS, float(calc.output_price) / _PROBE_TOKENS,
                      "genai-prices")


# Totals of several calls are rounded to this many decimals (the stored costs' precision).
USD_DECIMALS = 6


def priced_total(usage: Iterable[tuple[str | None, int, int]], pricer) -> tuple[float | None, int]:
    """(USD total, unpriced tokens) of (model, tokens_in, tokens_out) items.

    The total covers the priced items only; it is None when tokens were spent and no item
    could be priced, and 0.0 when no tokens were spent at all.
    """
    total, priced, unpriced_tokens = 0.0, False, 0
    for model, tokens_in, tokens_out in usage:
        tokens = (tokens_in or 0) + (tokens_out or 0)
        if tokens == 0:
            continue
        cost = pricer.cost(model, tokens_in, tokens_out) if model else None
        if cost is None:
            unpriced_tokens += tokens
        else:
            total += cost
            priced = True
    if priced:
        return round(total, USD_DECIMALS), unpriced_tokens
    return (None if unpriced_tokens else 0.0), unpriced_tokens
