"""``econbench sweep --dry-run``: the API keys still missing (listed, not fatal) and the cost
estimate, on the documented basis and on a measured run (``--like``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs.coffee.cost import COFFEE_CALLS_PER_RUN, COFFEE_INPUT_TOKENS_PER_CALL
from econbench.runs.cost_estimate import (
    CACHE_HIT_SHARE,
    OUTPUT_TOKENS_PER_CALL,
    EstimateError,
    estimate_plan,
)
from econbench.runs.experiment import load_plan

runner = CliRunner()
PAPER = Path(__file__).parents[2] / "configs" / "experiments" / "coffee_paper.toml"
KEYS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "ZAI_API_KEY",
    "MOONSHOT_API_KEY",
    "OPENROUTER_API_KEY",
)


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env file above


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_paper_matrix_dry_runs_without_keys_and_lists_them(no_keys, tmp_path) -> None:
    result = runner.invoke(app, ["sweep", str(PAPER), "--dry-run", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "missing before a real run: set ANTHROPIC_API_KEY, OPENAI_API_KEY" in result.stdout
    assert "OPENROUTER_API_KEY" in result.stdout and "nothing was run" in result.stdout
    assert "estimated cost: $" in result.stdout and "basis: the paper's roaster_A" in result.stdout
    assert not (tmp_path / "s").exists()
    result = runner.invoke(app, ["sweep", str(PAPER), "--out", str(tmp_path / "s")])
    assert result.exit_code == 2 and "ANTHROPIC_API_KEY" in result.stderr  # a real run refuses


def test_the_paper_basis_prices_every_model_played_firm(no_keys) -> None:
    estimate = estimate_plan(load_plan(PAPER, check=False))
    assert len(estimate.entries) == 27 and not estimate.unpriced
    by_id = {e.id: e for e in estimate.entries}
    sonnet = by_id["roaster_A-anthropic-claude-sonnet-4-6__paper__seed-0"]
    assert [a.actor for a in sonnet.actors] == [
        "farmer_A", "farmer_B", "roaster_A", "roaster_B", "retailer_A", "retailer_B"
    ]  # fmt: skip
    roaster = next(a for a in sonnet.actors if a.actor == "roaster_A")
    assert roaster.calls == pytest.approx(COFFEE_CALLS_PER_RUN)
    assert roaster.input_tokens == pytest.approx(
        COFFEE_CALLS_PER_RUN * COFFEE_INPUT_TOKENS_PER_CALL
    )
    # Sonnet 4.6: $3 input, $0.30 cache read, $3.75 cache write, $15 output per Mtok
    prompt, out = COFFEE_INPUT_TOKENS_PER_CALL, OUTPUT_TOKENS_PER_CALL
    hit = round(prompt * CACHE_HIT_SHARE)
    per_call = (hit * 0.3 + (prompt - hit) * 3.75 + out * 15.0) / 1e6
    assert roaster.cost_usd == pytest.approx(per_call * COFFEE_CALLS_PER_RUN)
    assert roaster.uncached_usd == pytest.approx((prompt * 3.0 + out * 15.0) / 1e6 * 1000)
    passive = by_id["roaster_A-passive__paper__seed-0"]  # a scripted roaster_A: five model firms
    assert len(passive.actors) == 5 and "roaster_A" not in {a.actor for a in passive.actors}
    assert estimate.cost_usd == pytest.approx(sum(e.cost_usd for e in estimate.entries))


def test_an_estimate_scales_with_days_and_skips_scripted_runs(tmp_path) -> None:
    path = write(
        tmp_path / "e.toml",
        'name = "t"\nbenchmark = "coffee"\nseeds = [1]\ndays = 9\n'
        '[matrix]\nroaster_A = ["heuristic", "openai/gpt-5.5", "openai-compatible/mystery"]\n'
        '[models."openai-compatible/mystery"]\nbase_url = "http://127.0.0.1:1/v1"\n',
    )
    estimate = estimate_plan(load_plan(path, check=False))
    heuristic, gpt, mystery = estimate.entries
    assert heuristic.actors == [] and heuristic.cost_usd == 0.0
    assert gpt.calls == pytest.approx(COFFEE_CALLS_PER_RUN / 10)
    assert gpt.cost_usd > 0 and mystery.unpriced == ["openai-compatible/mystery"]
    assert estimate.unpriced == ["openai-compatible/mystery"]


def _coffee_run(run_dir: Path, days: int, firms: dict[str, dict[str, int]]) -> Path:
    write(run_dir / "meta.json", json.dumps({"benchmark": "coffee"}))
    write(run_dir / "config.json", "{}")
    write(run_dir / "events.jsonl", "")
    summary = {"days": days, "status": "completed", "firms": firms}
    write(run_dir / "summary.json", json.dumps(summary))
    return run_dir


def test_like_measures_calls_and_tokens_from_a_finished_run(tmp_path) -> None:
    usage = {"llm_calls": 300, "input_tokens": 3_000_000, "cached_input_tokens": 1_500_000}
    run = _coffee_run(
        tmp_path / "run", 30, {"roaster_A": {**usage, "output_tokens": 60_000}, "farmer_A": {}}
    )
    path = write(
        tmp_path / "e.toml",
        'name = "t"\nbenchmark = "coffee"\nseeds = [1]\ndays = 90\n'
        '[matrix]\nroaster_A = ["openai/gpt-5.5"]\n',
    )
    [entry] = estimate_plan(load_plan(path, check=False), like=run).entries
    [actor] = entry.actors
    assert actor.calls == pytest.approx(900)  # 10 calls a day, 90 days
    assert actor.input_tokens == pytest.approx(900 * 10_000)
    # gpt-5.5: half the prompt cached at $0.50, half at $5 input, 200 output at $30
    assert actor.cost_usd == pytest.approx(900 * (5_000 * 0.5 + 5_000 * 5.0 + 200 * 30.0) / 1e6)
    result = runner.invoke(app, ["sweep", str(path), "--dry-run", "--like", str(run)])
    assert result.exit_code == 0, result.output
    assert "measured in" in result.stdout and "10.0 calls per day" in result.stdout


def test_like_refuses_what_it_cannot_measure(tmp_path) -> None:
    path = write(
        tmp_path / "e.toml",
        'name = "t"\nbenchmark = "coffee"\nseeds = [1]\n[matrix]\nroaster_A = ["openai/gpt-5.5"]\n',
    )
    plan = load_plan(path, check=False)
    with pytest.raises(EstimateError, match="not a run directory"):
        estimate_plan(plan, like=tmp_path)
    scripted = _coffee_run(tmp_path / "scripted", 5, {"roaster_A": {"llm_calls": 0}})
    with pytest.raises(EstimateError, match="no model calls"):
        estimate_plan(plan, like=scripted)
    result = runner.invoke(app, ["sweep", str(path), "--like", str(scripted)])
    assert result.exit_code == 2 and "--like goes with --dry-run" in result.stderr
    result = runner.invoke(app, ["sweep", str(path), "--dry-run", "--like", str(scripted)])
    assert result.exit_code == 2 and "no model calls" in result.stderr


def test_allo_estimate_comes_from_the_framings_texts(no_keys, tmp_path) -> None:
    path = write(
        tmp_path / "a.toml",
        'name = "a"\nbenchmark = "allo"\nepisodes = 4\n'
        '[matrix]\nframings = ["r0", "r2"]\npolicies = ["eager", "openai/gpt-5.5"]\n',
    )
    estimate = estimate_plan(load_plan(path, check=False))
    by_id = {e.id: e for e in estimate.entries}
    assert by_id["r0-eager-k0-b3"].actors == []
    r0, r2 = by_id["r0-openai-gpt-5.5-k0-b3"], by_id["r2-openai-gpt-5.5-k0-b3"]
    assert r0.calls > 0 and r0.calls % 4 == 0  # the same decision turns in every episode
    assert r2.input_tokens / r2.calls > r0.input_tokens / r0.calls  # R2's texts are longer
    assert r0.cost_usd > 0
    result = runner.invoke(app, ["sweep", str(path), "--dry-run", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "missing before a real run: set OPENAI_API_KEY" in result.stdout
