"""The price table: each provider's caching arithmetic, lookups by any name form, overrides."""

from __future__ import annotations

import math

import pytest

from econbench.agents.models.base import Usage
from econbench.agents.models.pricing import (
    DEFAULT_PRICES,
    PRICE_TABLE,
    PRICE_TABLE_VERSION,
    Price,
    PriceTable,
    clear_registered_prices,
    cost_usd,
    price_for,
    price_from_dict,
    register_price,
)

PAPER_MODELS = [
    "claude-opus-4-7",
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
    "gpt-5.5",
    "gemini-3.1-pro",
    "kimi-k2.6",
    "glm-5.1",
]
COMMON_MODELS = ["gpt-5", "gpt-5-mini", "claude-sonnet-4-5", "gemini-2.5-pro", "gemini-2.5-flash"]


@pytest.fixture(autouse=True)
def _fresh_overrides():
    clear_registered_prices()
    yield
    clear_registered_prices()


def close(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def test_version_and_every_required_model_is_priced():
    assert PRICE_TABLE_VERSION == "2026-11-29"
    assert DEFAULT_PRICES.to_dict()["version"] == PRICE_TABLE_VERSION
    for model in PAPER_MODELS + COMMON_MODELS:
        price = price_for(model)
        assert price is not None, model
        assert price.source in ("list", "estimate"), model
        assert price.input > 0 and price.output > price.input, model
        assert price.cached_input <= price.input <= price.cache_write, model
    for model, price in PRICE_TABLE.items():
        if price.source == "estimate":
            assert price.note, f"{model}: an estimate must say what was assumed"


def test_anthropic_cache_writes_cost_more_and_reads_a_tenth():
    for model in ("claude-opus-4-7", "claude-sonnet-4-6", "claude-haiku-4-5", "claude-sonnet-4-5"):
        p = price_for(model)
        assert p is not None
        assert math.isclose(p.cache_write, 1.25 * p.input)
        assert math.isclose(p.cached_input, 0.1 * p.input)
    # 10k prompt tokens: 6k read from cache, 2k written to it, 2k plain; 500 out (200 thinking).
    usage = Usage(
        input_tokens=10_000,
        cached_input_tokens=6_000,
        cache_write_tokens=2_000,
        output_tokens=500,
        reasoning_tokens=200,
    )
    expected = (2_000 * 3.0 + 6_000 * 0.30 + 2_000 * 3.75 + 500 * 15.0) / 1e6
    assert close(cost_usd("anthropic/claude-sonnet-4-6", usage), expected)
    assert close(cost_usd("anthropic/claude-opus-4-7", Usage(1_000_000, 0, 0, 1_000_000)), 30.0)
    assert close(cost_usd("claude-haiku-4-5", Usage(1_000_000, 1_000_000, 0, 0)), 0.10)


def test_openai_automatic_caching_and_long_context_tier():
    usage = Usage(input_tokens=100_000, cached_input_tokens=80_000, output_tokens=1_000)
    assert close(cost_usd("openai/gpt-5.5", usage), (20_000 * 5 + 80_000 * 0.5 + 1_000 * 30) / 1e6)
    assert close(
        cost_usd("openai/gpt-5", usage), (20_000 * 1.25 + 80_000 * 0.125 + 1_000 * 10) / 1e6
    )
    assert close(
        cost_usd("openai/gpt-5-mini", usage), (20_000 * 0.25 + 80_000 * 0.025 + 1_000 * 2) / 1e6
    )
    # Past 272k prompt tokens the whole GPT-5.5 call is billed at the long-context rates.
    long = Usage(input_tokens=300_000, cached_input_tokens=100_000, output_tokens=1_000)
    assert close(cost_usd("openai/gpt-5.5", long), (200_000 * 10 + 100_000 * 1 + 1_000 * 45) / 1e6)
    at_threshold = Usage(input_tokens=272_000)
    assert close(cost_usd("openai/gpt-5.5", at_threshold), 272_000 * 5 / 1e6)


def test_gemini_implicit_caching_and_200k_tier():
    usage = Usage(
        input_tokens=50_000, cached_input_tokens=40_000, output_tokens=2_000, reasoning_tokens=1_500
    )
    expected = (10_000 * 1.25 + 40_000 * 0.125 + 2_000 * 10) / 1e6
    assert close(cost_usd("google/gemini-2.5-pro", usage), expected)
    long = Usage(input_tokens=250_000, cached_input_tokens=50_000, output_tokens=1_000)
    expected_long = (200_000 * 2.5 + 50_000 * 0.25 + 1_000 * 15) / 1e6
    assert close(cost_usd("google/gemini-2.5-pro", long), expected_long)
    assert close(
        cost_usd("google/gemini-3.1-pro", Usage(100_000, 0, 0, 10_000)),
        (100_000 * 2 + 10_000 * 12) / 1e6,
    )
    assert close(
        cost_usd("google/gemini-2.5-flash", Usage(1_000_000, 500_000, 0, 0)),
        (500_000 * 0.30 + 500_000 * 0.03) / 1e6,
    )


def test_reasoning_tokens_are_part_of_output_and_not_billed_twice():
    plain = cost_usd("openai/gpt-5.5", Usage(input_tokens=1_000, output_tokens=1_000))
    thinking = cost_usd(
        "openai/gpt-5.5", Usage(input_tokens=1_000, output_tokens=1_000, reasoning_tokens=800)
    )
    assert plain == thinking


def test_open_weight_models_at_their_makers_prices():
    assert close(cost_usd("openai-compatible/kimi-k2.6", Usage(1_000_000, 0, 0, 1_000_000)), 4.95)
    assert close(cost_usd("openai-compatible/glm-5.1", Usage(1_000_000, 1_000_000, 0, 0)), 0.26)


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("claude-sonnet-4-6-20260101", "claude-sonnet-4-6"),
        ("anthropic/claude-sonnet-4-6-20260101", "claude-sonnet-4-6"),
        ("claude-opus-4-7@20260301", "claude-opus-4-7"),
        ("claude-haiku-4-5-latest", "claude-haiku-4-5"),
        ("gpt-5-2025-08-07", "gpt-5"),
        ("openai/gpt-5.5-2026-04-23", "gpt-5.5"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("google/gemini-3.1-pro-preview", "gemini-3.1-pro"),
        ("gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"),
        ("openai-compatible/moonshotai/Kimi-K2.6", "kimi-k2.6"),
        ("openai-compatible/z-ai/glm-5-1", "glm-5.1"),
        ("GPT-5.5", "gpt-5.5"),
    ],
)
def test_provider_prefixed_dated_and_aliased_names_find_the_base_entry(name, base):
    assert price_for(name) is PRICE_TABLE[base]


def test_similar_names_do_not_borrow_each_others_prices():
    assert price_for("gpt-5-mini") is not price_for("gpt-5")
    assert price_for("gpt-5.5") is not price_for("gpt-5")
    assert price_for("gpt-5.5-pro") is None  # a different, much dearer model: unknown, not 5.5
    assert price_for("claude-sonnet-4-7") is None


@pytest.mark.parametrize("name", ["openai-compatible/my-model", "foo/bar", "", "   ", "/"])
def test_unknown_models_cost_none_never_crash(name):
    assert cost_usd(name, Usage(1_000, 0, 0, 100)) is None


def test_odd_usage_never_crashes_or_goes_negative():
    assert cost_usd(None, Usage(1, 0, 0, 1)) is None  # type: ignore[arg-type]
    assert cost_usd("gpt-5", None) is None  # type: ignore[arg-type]
    # A provider reporting more cached tokens than prompt tokens: nothing billed negative.
    weird = Usage(input_tokens=100, cached_input_tokens=150, output_tokens=-5)
    cost = cost_usd("gpt-5", weird)
    assert cost is not None and cost >= 0
    assert cost_usd("gpt-5", Usage()) == 0.0


def test_register_price_overrides_and_adds():
    usage = Usage(1_000_000, 0, 0, 1_000_000)
    assert cost_usd("openai-compatible/my-llama", usage) is None
    register_price("openai-compatible/my-llama", Price(0.1, 0.1, 0.1, 0.2))
    assert close(cost_usd("openai-compatible/my-llama", usage), 0.3)
    # A self-hosted Kimi costs what your hardware costs, not Moonshot's list price ...
    register_price("openai-compatible/kimi-k2.6", Price(0, 0, 0, 0))
    assert cost_usd("openai-compatible/kimi-k2.6", usage) == 0.0
    # ... while the same model elsewhere keeps the table's price.
    assert close(cost_usd("openai-compatible/moonshot/kimi-k2.6", usage), 4.95)
    # A bare override wins for every provider form and dated variant.
    register_price("gpt-5.5", Price(1, 1, 1, 1))
    assert close(cost_usd("openai/gpt-5.5-2026-04-23", usage), 2.0)
    assert price_for("gpt-5.5").source == "config"
    clear_registered_prices()
    assert close(cost_usd("openai/gpt-5.5", Usage(100_000, 0, 0, 100_000)), 3.5)


def test_price_from_config_dict():
    price = price_from_dict({"input": 2, "output": 8, "cached_input": 0.5})
    assert price == Price(2.0, 0.5, 2.0, 8.0, source="config")
    tiered = price_from_dict(
        {
            "input": 1,
            "output": 2,
            "long_context_above": 1000,
            "long_context": {"input": 3, "output": 4},
        }
    )
    assert close(tiered.cost(Usage(2_000, 0, 0, 0)), 2_000 * 3 / 1e6)
    with pytest.raises(ValueError, match="input"):
        price_from_dict({"output": 1})
    with pytest.raises(ValueError, match="unknown price field"):
        price_from_dict({"input": 1, "output": 1, "outptu": 2})
    with pytest.raises(ValueError, match="non-negative"):
        Price(-1, 0, 0, 0)
    with pytest.raises(TypeError):
        register_price("x", {"input": 1})  # type: ignore[arg-type]


def test_separate_tables_do_not_share_overrides():
    table = PriceTable(PRICE_TABLE, version="test")
    table.register("gpt-5", Price(0, 0, 0, 0))
    assert table.cost("gpt-5", Usage(1_000_000)) == 0.0
    assert close(cost_usd("gpt-5", Usage(1_000_000)), 1.25)
    assert table.to_dict()["prices"]["gpt-5"]["source"] == "config"


@pytest.mark.parametrize("bad", [math.inf, math.nan, True])
def test_a_price_must_be_a_finite_number(bad):
    with pytest.raises(ValueError, match="finite, non-negative"):
        Price(bad, 0, 0, 0)


def test_a_cost_that_overflows_is_unknown_never_infinite():
    table = PriceTable({"big": Price(1e300, 0, 0, 1e300)}, version="test")
    assert table.cost("big", Usage(10**8, 0, 0, 10**8)) is None
