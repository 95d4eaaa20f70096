"""roaster_A's yardstick (issue 28, item 3): the passive floor and the heuristic baseline are
the scores of real runs on the same background, horizon and seeds; they are cached by
everything that decides them, so a repeated call plays nothing and a change is never served
a stale number; ``coffee run`` prints them beside its result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs.coffee import yardstick
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir

DAYS = 4
runner = CliRunner()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(yardstick.CACHE_ENV, str(where))
    return where


def roaster_score(config: RunConfig, out: Path) -> float:
    return float(run_to_dir(config, out)["firms"]["roaster_A"]["net_income"])


def refuse_to_play(config: RunConfig) -> float:
    raise AssertionError(f"played {config.policy_for('roaster_A')} seed {config.seed} again")


@pytest.mark.parametrize("condition", ["hardened", "paper"])
def test_the_baselines_are_the_scores_of_real_runs(
    condition: str, cache: Path, tmp_path: Path
) -> None:
    base = RunConfig(days=DAYS, condition=condition, agents={"roaster_A": "openai/gpt-x"})
    measured = yardstick.measure(base, [0, 1])
    assert measured.unavailable is None and measured.seeds == (0, 1)
    assert measured.condition == condition and measured.days == DAYS
    for seed in (0, 1):
        for player, got in (("passive", measured.passive), ("heuristic", measured.heuristic)):
            config = RunConfig(
                seed=seed, days=DAYS, condition=condition, agents={"roaster_A": player}
            )
            assert got[seed] == roaster_score(config, tmp_path / f"{player}{seed}")


def test_the_comparisons_are_differences_from_the_means(cache: Path) -> None:
    measured = yardstick.measure(RunConfig(days=DAYS), [0, 1])
    assert measured.passive_mean == pytest.approx(sum(measured.passive.values()) / 2)
    result = 123.45
    assert measured.vs_passive(result) == pytest.approx(result - measured.passive_mean)
    assert measured.vs_heuristic(result) == pytest.approx(result - measured.heuristic_mean)
    assert measured.headroom(result) == pytest.approx(measured.bound - result)
    assert yardstick.measure(RunConfig(), [0], cache).bound == pytest.approx(23_782.50)


def test_a_repeated_call_plays_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = yardstick.measure(RunConfig(days=DAYS), [0, 1])
    monkeypatch.setattr(yardstick, "play_score", refuse_to_play)
    assert yardstick.measure(RunConfig(days=DAYS), [1, 0]).heuristic == first.heuristic
    assert len(list(cache.rglob("*.json"))) == 4  # 2 seeds × 2 baselines


@pytest.mark.parametrize(
    "change",
    ["days", "background", "economy", "condition", "code"],
)
def test_what_decides_a_figure_is_in_its_key(
    change: str, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yardstick.measure(RunConfig(days=DAYS), [0])
    played: list[RunConfig] = []
    real = yardstick.play_score
    monkeypatch.setattr(yardstick, "play_score", lambda c: played.append(c) or real(c))
    config = RunConfig(days=DAYS)
    if change == "days":
        config = RunConfig(days=DAYS + 1)
    elif change == "background":
        config = RunConfig(days=DAYS, agents={"default": "scripted"})
    elif change == "economy":
        config = RunConfig.model_validate({"days": DAYS, "economy": {"spoilage_rate": 0.0}})
    elif change == "condition":
        config = RunConfig(days=DAYS, condition="paper")
    else:
        monkeypatch.setattr(yardstick, "code_digest", lambda: "an edited economy")
    yardstick.measure(config, [0])
    assert [c.policy_for("roaster_A") for c in played] == ["passive", "heuristic"]


def test_a_torn_cache_entry_is_measured_again(cache: Path) -> None:
    first = yardstick.measure(RunConfig(days=DAYS), [0])
    for entry in cache.rglob("*.json"):
        entry.write_text('{"net_income": 1e9', encoding="utf-8")  # cut mid-write
    again = yardstick.measure(RunConfig(days=DAYS), [0])
    assert again.passive == first.passive and again.heuristic == first.heuristic
    assert all(json.loads(p.read_text())["net_income"] != 1e9 for p in cache.rglob("*.json"))


def test_a_baseline_run_stores_its_own_score(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = RunConfig(seed=3, days=DAYS, agents={"roaster_A": "heuristic"})
    summary = run_to_dir(config, tmp_path / "run")
    assert yardstick.remember(config, summary)
    assert not yardstick.remember(RunConfig(days=DAYS, agents={"roaster_A": "scripted"}), summary)
    played: list[str] = []
    real = yardstick.play_score
    monkeypatch.setattr(
        yardstick, "play_score", lambda c: played.append(c.policy_for("roaster_A")) or real(c)
    )
    measured = yardstick.measure(RunConfig(days=DAYS, agents={"roaster_A": "haggle"}), [3])
    assert played == ["passive"]
    assert measured.heuristic[3] == summary["firms"]["roaster_A"]["net_income"]


def test_a_model_background_has_no_yardstick(cache: Path) -> None:
    measured = yardstick.measure(RunConfig(days=DAYS, agents={"retailer_B": "openai/gpt-x"}), [0])
    assert measured.unavailable is not None and "retailer_B" in measured.unavailable
    assert not measured.passive and not list(cache.rglob("*.json"))
    broken = yardstick.measure({"days": DAYS, "agents": {"nobody": "passive"}}, [0])
    assert broken.unavailable is not None and broken.unavailable.startswith("config:")


def test_coffee_run_prints_the_yardstick_beside_its_result(cache: Path, tmp_path: Path) -> None:
    args = ["coffee", "run", "--days", str(DAYS), "--actor", "roaster_A=scripted"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "one")])
    assert result.exit_code == 0, result.output
    measured = yardstick.measure(RunConfig(days=DAYS, agents={"roaster_A": "scripted"}), [0])
    text = result.output
    assert "roaster_A's yardstick (seed 0, 4 days)" in text
    assert f"{measured.passive_mean:,.2f}" in text and f"{measured.heuristic_mean:,.2f}" in text
    mine = json.loads((tmp_path / "one" / "summary.json").read_text())
    score = mine["firms"]["roaster_A"]["net_income"]
    assert f"{measured.vs_heuristic(score):+,.2f}" in text
    flat = " ".join(text.split())  # the caption wraps
    assert f"Headroom (duopoly bound − roaster_A): {measured.headroom(score):,.2f}" in flat
    result = runner.invoke(app, [*args, "--seeds", "0-1", "--out", str(tmp_path / "two")])
    assert result.exit_code == 0, result.output
    assert "roaster_A's yardstick (mean of 2 seeds, 4 days)" in result.output
    quiet = runner.invoke(app, [*args, "--quiet", "--out", str(tmp_path / "quiet")])
    assert "yardstick" not in quiet.output
