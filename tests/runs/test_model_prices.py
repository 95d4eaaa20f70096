"""A model's price in its settings (``[models."NAME"]`` ``input_usd_per_mtok`` …): validated,
used by the run's cost accounting and by the estimate, and "unpriced" shown the same way
everywhere (issue 28, item 5)."""

from __future__ import annotations

import asyncio
import io
import math

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from econbench.agents.models.base import GenerateConfig, Usage
from econbench.agents.models.registry import (
    ModelSettings,
    build_provider,
    register_scripted,
    unregister_scripted,
)
from econbench.agents.models.scripted import ScriptedModel, text_output
from econbench.cli import app
from econbench.runs.coffee.config import RunConfig
from econbench.runs.cost_display import UNPRICED, usd
from econbench.runs.cost_estimate import estimate_entries
from econbench.runs.experiment import Entry

runner = CliRunner()
PRICE = {"input_usd_per_mtok": 2.0, "output_usd_per_mtok": 10.0}


def test_a_price_reads_with_its_cache_rates_defaulting_to_the_input_rate() -> None:
    price = ModelSettings.model_validate(PRICE).price()
    assert price is not None and price.source == "config"
    assert (price.input, price.cached_input, price.cache_write, price.output) == (2, 2, 2, 10)
    given = ModelSettings.model_validate({**PRICE, "cached_input_usd_per_mtok": 0.2}).price()
    assert given is not None and given.cached_input == 0.2 and given.cache_write == 2.0
    assert ModelSettings().price() is None


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ({"input_usd_per_mtok": -1.0, "output_usd_per_mtok": 1.0}, "greater than or equal"),
        ({"input_usd_per_mtok": math.nan, "output_usd_per_mtok": 1.0}, "finite"),
        ({**PRICE, "cached_input_usd_per_mtok": math.inf}, "finite"),
        ({"input_usd_per_mtok": 1.0}, "output_usd_per_mtok"),
        ({"cached_input_usd_per_mtok": 1.0}, "input_usd_per_mtok and output_usd_per_mtok"),
        ({"input_usd_per_mtok": "3", "output_usd_per_mtok": 1.0}, "valid number"),
        ({"input_usd_per_mtok": 1e9, "output_usd_per_mtok": 1.0}, "less than or equal"),
    ],
)
def test_a_bad_price_is_refused(table: dict, says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        ModelSettings.model_validate(table)
    assert says in str(caught.value)


def test_an_unset_price_leaves_the_config_as_it_was() -> None:
    """Configs that give no price keep their bytes (and so their hashes)."""
    assert not any("usd" in key for key in ModelSettings().model_dump())
    assert ModelSettings.model_validate(PRICE).model_dump()["output_usd_per_mtok"] == 10.0


def test_the_provider_prices_calls_with_the_settings_price() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    name = register_scripted(
        "priced-probe", ScriptedModel(outputs=[text_output("a", usage=usage)] * 2)
    )
    try:
        priced = build_provider(name, ModelSettings.model_validate(PRICE))
        out = asyncio.run(priced.generate([], [], GenerateConfig()))
        assert out.cost_usd == pytest.approx(12.0)
        unpriced = build_provider(name, ModelSettings())
        assert asyncio.run(unpriced.generate([], [], GenerateConfig())).cost_usd is None
    finally:
        unregister_scripted(name)


def test_the_estimate_uses_the_settings_price() -> None:
    model = "openai-compatible/own"

    def entry(settings: dict) -> Entry:
        config = RunConfig.model_validate(
            {"days": 90, "agents": {"roaster_A": model}, "models": {model: settings}}
        )
        return Entry("e", "e", "coffee", {}, config.model_dump(mode="json", by_alias=True))

    priced = estimate_entries("coffee", [entry(PRICE)])
    assert priced.unpriced == []
    # 1,000 calls of 90,000 input tokens (all at the input rate here) and 500 output tokens
    assert priced.cost_usd == pytest.approx(1000 * (90_000 * 2.0 + 500 * 10.0) / 1e6)
    assert estimate_entries("coffee", [entry({})]).unpriced == [model]


def test_a_bad_price_in_a_coffee_config_is_one_line(tmp_path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[agents]\nroaster_A = "openai-compatible/own"\n'
        '[models."openai-compatible/own"]\ninput_usd_per_mtok = -2.0\noutput_usd_per_mtok = 1.0\n'
    )
    out = tmp_path / "run"
    result = runner.invoke(app, ["coffee", "run", "--config", str(config), "--out", str(out)])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "input_usd_per_mtok" in errors[0]
    assert not out.exists()


def test_a_bad_price_in_an_allo_models_file_is_one_line(tmp_path) -> None:
    config = tmp_path / "m.toml"
    config.write_text('[models."openai-compatible/own"]\ninput_usd_per_mtok = nan\n')
    out = tmp_path / "cell"
    args = ["allo", "run", "--framing", "r1", "--policy", "openai-compatible/own"]
    result = runner.invoke(app, [*args, "--config", str(config), "--out", str(out)])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "input_usd_per_mtok" in errors[0]
    assert not out.exists()


def test_unpriced_has_one_wording() -> None:
    assert usd(None) == UNPRICED == "unpriced"
    assert usd(0.0, unpriced=True) == UNPRICED
    assert usd(1.5, unpriced=True) == "1.50 + unpriced"
    assert usd(0.01234) == "0.0123" and usd(1234.5) == "1,234.50"


def test_the_coffee_usage_table_says_unpriced() -> None:
    from rich.console import Console

    from econbench.runs.coffee.cli import usage_table

    firm = {"policy": "openai-compatible/own", "llm_calls": 3, "cost_usd": None}
    firm.update(input_tokens=10, cached_input_tokens=0, output_tokens=5)
    table = usage_table([{"firms": {"roaster_A": firm}}])
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(table)
    text = console.export_text()
    assert "unpriced" in text and "≥" not in text and "0.0000" not in text
