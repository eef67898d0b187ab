"""Prices: operator overrides over genai-prices' bundled data; unpriced is None, never $0."""

from __future__ import annotations

import json

import pytest

from obsctl.config import Settings
from obsctl.errors import InvalidInput
from obsctl.services.pricing import ModelPrice, Pricer, pricer_for


def write_prices(tmp_path, table) -> object:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(table) if not isinstance(table, str) else table)
    return path


def test_bundled_price_of_a_known_model():
    price = Pricer().price("gpt-4o")
    assert price.source == "genai-prices"
    # gpt-4o: $2.50 per million input tokens, $10 per million output tokens.
    assert price.input_per_token == pytest.approx(2.5e-6)
    assert price.output_per_token == pytest.approx(10e-6)


def test_cost_of_a_call_from_bundled_prices():
    assert Pricer().cost("gpt-4o", 1000, 500) == pytest.approx(1000 * 2.5e-6 + 500 * 10e-6)


def test_unknown_model_is_unpriced_not_zero():
    pricer = Pricer()
    assert pricer.price("in-house-llm-v2") is None
    assert pricer.cost("in-house-llm-v2", 1000, 1000) is None


def test_provider_prefixed_model_names():
    assert Pricer().price("openai/gpt-4o") == Pricer().price("gpt-4o")
    assert Pricer().price("nosuchprovider/gpt-4o") is None


def test_no_model_is_unpriced():
    pricer = Pricer()
    assert pricer.price(None) is None
    assert pricer.cost(None, 10, 10) is None
    assert pricer.cost("", 10, 10) is None


def test_missing_token_counts_count_as_zero():
    assert Pricer().cost("gpt-4o", None, None) == 0.0


def test_override_wins_over_bundled_price(tmp_path):
    path = write_prices(tmp_path, {"gpt-4o": {"input_per_mtok": 1, "output_per_mtok": 4}})
    price = Pricer(path).price("gpt-4o")
    assert price == ModelPrice(1e-6, 4e-6, "override")


def test_override_adds_a_model_and_matches_case_insensitively(tmp_path):
    path = write_prices(tmp_path, {"In-House-LLM": {"input_per_mtok": 0.5, "output_per_mtok": 1.5}})
    pricer = Pricer(path)
    assert pricer.cost("in-house-llm", 2_000_000, 1_000_000) == pytest.approx(1.0 + 1.5)
    assert pricer.price("IN-HOUSE-LLM").source == "override"


def test_a_zero_override_is_priced_at_zero(tmp_path):
    path = write_prices(tmp_path, {"free-model": {"input_per_mtok": 0, "output_per_mtok": 0}})
    assert Pricer(path).cost("free-model", 100, 100) == 0.0


def test_lookups_are_cached_including_misses():
    pricer = Pricer()
    first = pricer.price("gpt-4o-mini")
    assert pricer.price("gpt-4o-mini") is first
    pricer.price("nope-model")
    assert "nope-model" in pricer._cache and pricer._cache["nope-model"] is None


def test_pricer_for_reads_obsctl_prices(tmp_path):
    path = write_prices(tmp_path, {"m1": {"input_per_mtok": 3, "output_per_mtok": 6}})
    settings = Settings.from_env({"OBSCTL_PRICES": str(path)}, db_path=tmp_path / "x.db")
    assert pricer_for(settings).cost("m1", 1_000_000, 0) == pytest.approx(3.0)


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (json.dumps({"m": 3}), "'m' must be an object"),
    (json.dumps({"m": {"input_per_mtok": 1}}), "'m'.output_per_mtok must be a non-negative number"),
    (json.dumps({"m": {"input_per_mtok": -1, "output_per_mtok": 1}}), "'m'.input_per_mtok"),
    (json.dumps({"m": {"input_per_mtok": "1", "output_per_mtok": 1}}), "'m'.input_per_mtok"),
])
def test_bad_overrides_file_is_invalid_input(tmp_path, content, fragment):
    path = write_prices(tmp_path, content)
    with pytest.raises(InvalidInput) as info:
        pricer_for(Settings.from_env({"OBSCTL_PRICES": str(path)}, db_path=tmp_path / "x.db"))
    assert fragment in info.value.message
    assert str(path) in info.value.message


def test_missing_overrides_file_is_invalid_input(tmp_path):
    with pytest.raises(InvalidInput, match="cannot read the OBSCTL_PRICES file"):
        Pricer(tmp_path / "absent.json")
