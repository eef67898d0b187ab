"""Token prices: what a model's tokens cost in USD.

Interface (used by metrics, triage, postmortems and SLA checks):

- `Pricer(overrides_path=None)`: a price table. Operator overrides (a JSON file
  `{model: {"input_per_mtok": x, "output_per_mtok": y}}`, prices in USD per million tokens)
  win over the bundled data of the `genai-prices` package (offline, no network).
  A bad overrides file raises InvalidInput naming the file and the problem.
- `pricer.price(model) -> ModelPrice | None`: per-token prices and their `source`
  ('override' or 'genai-prices'); None when the model is None or has no known price.
- `pricer.cost(model, tokens_in, tokens_out, cache_read, cache_write, reasoning) -> float | None`:
  USD cost; None when unpriced. A model without a price is unpriced (None), never $0. Cache
  read and write tokens are parts of tokens_in, reasoning tokens a part of tokens_out (the
  OpenTelemetry GenAI counting); each part is priced at its own rate, which is the input (or
  output) rate where the model has none.
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
from dataclasses import dataclass, field
from pathlib import Path

from obsctl.errors import InvalidInput

_PER_MTOK = 1_000_000
# genai-prices applies tiers ("cliff" pricing above e.g. 200k input tokens); asking for a small
# usage gives the base per-token rate, which is what a per-event cost needs.
_PROBE_TOKENS = 1000


@dataclass(frozen=True)
class ModelPrice:
    """Per-token USD prices of one model and where they came from. The cache and reasoning
    rates are those of input and output tokens when not given."""

    input_per_token: float
    output_per_token: float
    source: str  # 'override' or 'genai-prices'
    cache_read_per_token: float | None = None
    cache_write_per_token: float | None = None
    reasoning_per_token: float | None = None
    # rates(), every part's rate given: set once the missing parts are filled in.
    _rates: tuple[float, float, float, float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        inp, out = self.input_per_token, self.output_per_token
        read = inp if self.cache_read_per_token is None else self.cache_read_per_token
        write = inp if self.cache_write_per_token is None else self.cache_write_per_token
        thought = out if self.reasoning_per_token is None else self.reasoning_per_token
        for name, value in (("cache_read_per_token", read), ("cache_write_per_token", write),
                            ("reasoning_per_token", thought), ("_rates", (inp, read, write, out, thought))):
            object.__setattr__(self, name, value)

    def rates(self) -> tuple[float, float, float, float, float]:
        """(input, cache read, cache write, output, reasoning) per token: the order of the
        placeholders of the stores' recosting SQL (store/cost_sql.SET_MODEL_COSTS)."""
        return self._rates

    def usage_cost(self, tokens_in: int | None, tokens_out: int | None, cache_read: int | None = None,
                   cache_write: int | None = None, reasoning: int | None = None) -> float:
        """USD cost of one call's tokens (None counts as 0); the cache parts of tokens_in and
        the reasoning part of tokens_out at their own rates. The same arithmetic, in the same
        order, as store/cost_sql.SET_MODEL_COSTS, so a recost gives the same number."""
        read, write, thought = cache_read or 0, cache_write or 0, reasoning or 0
        inp, read_rate, write_rate, out, thought_rate = self._rates
        return (((tokens_in or 0) - read - write) * inp + read * read_rate
                + write * write_rate + ((tokens_out or 0) - thought) * out
                + thought * thought_rate)


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

    def cost(self, model: str | None, tokens_in: int | None, tokens_out: int | None,
             cache_read: int | None = None, cache_write: int | None = None,
             reasoning: int | None = None) -> float | None:
        """USD cost of one call (missing token counts count as 0); None when unpriced."""
        price = self.price(model)
        if price is None:
            return None
        return price.usage_cost(tokens_in, tokens_out, cache_read, cache_write, reasoning)


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
        unknown = sorted(set(entry) - set(_OVERRIDE_KEYS))
        if unknown:
            raise InvalidInput(f"{where}: {model!r} has an unknown key {unknown[0]!r} (the keys are "
                               f"{', '.join(_OVERRIDE_KEYS)})")
        per_token: list[float | None] = []
        for key in _OVERRIDE_KEYS:
            value = entry.get(key)
            if value is None and key not in _REQUIRED_KEYS:
                per_token.append(None)
                continue
            if not isinstance(value, int | float) or type(value) is bool or not math.isfinite(value) or value < 0:
                raise InvalidInput(f"{where}: {model!r}.{key} must be a non-negative number "
                                   f"(USD per million tokens), got {value!r}")
            per_token.append(value / _PER_MTOK)
        inp, out, read, write, thought = per_token
        if inp is None or out is None:  # required: checked above
            raise InvalidInput(f"{where}: {model!r} needs input_per_mtok and output_per_mtok")
        prices[model.lower()] = ModelPrice(inp, out, "override", read, write, thought)
    return prices


# An overrides entry's keys, in ModelPrice.rates() order; the first two are required.
_OVERRIDE_KEYS = ("input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok",
                  "reasoning_per_mtok")
_REQUIRED_KEYS = _OVERRIDE_KEYS[:2]


def _library_price(model: str) -> ModelPrice | None:
    """Ask genai-prices (imported lazily: it takes ~0.5 s) for the base per-token rates.

    A `provider/model` name (LiteLLM and OpenRouter style) is looked up as that model of
    that provider when the whole name is unknown.
    """
    from genai_prices import Usage, calc_price

    n = _PROBE_TOKENS
    usage = Usage(input_tokens=n, output_tokens=n)
    where: dict = {}
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
        model, where = name, {"provider_id": provider}
    # The rate of each part: a usage made of that part alone (genai-prices falls back to the
    # input or output rate where the model has no rate of its own).
    read = calc_price(Usage(input_tokens=n, cache_read_tokens=n), model, **where).input_price
    write = calc_price(Usage(input_tokens=n, cache_write_tokens=n), model, **where).input_price
    thought = calc_price(Usage(output_tokens=n, output_reasoning_tokens=n), model, **where).output_price
    return ModelPrice(float(calc.input_price) / n, float(calc.output_price) / n, "genai-prices",
                      float(read) / n, float(write) / n, float(thought) / n)


# Totals of several calls are rounded to this many decimals (the stored costs' precision).
USD_DECIMALS = 6


def priced_total(usage: Iterable[tuple], pricer) -> tuple[float | None, int]:
    """(USD total, unpriced tokens) of (model, tokens_in, tokens_out[, cache_read, cache_write,
    reasoning]) items.

    The total covers the priced items only; it is None when tokens were spent and no item
    could be priced, and 0.0 when no tokens were spent at all.
    """
    total, priced, unpriced_tokens = 0.0, False, 0
    for model, tokens_in, tokens_out, *parts in usage:
        tokens = (tokens_in or 0) + (tokens_out or 0)
        if tokens == 0:
            continue
        cost = pricer.cost(model, tokens_in, tokens_out, *parts) if model else None
        if cost is None:
            unpriced_tokens += tokens
        else:
            total += cost
            priced = True
    if priced:
        return round(total, USD_DECIMALS), unpriced_tokens
    return (None if unpriced_tokens else 0.0), unpriced_tokens
