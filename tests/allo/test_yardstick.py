"""The PPO yardstick: its evaluation harness, a short training end to end, determinism, CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from econbench.allo.game.stream import TRAIN_SEED_START, StreamConfig, generate_streams
from econbench.allo.gym.envs import SIGHTING_SCALE, AlloFeaturesEnv
from econbench.allo.gym.yardstick import (
    MODEL_FILE,
    RESULTS_JSON,
    RESULTS_MD,
    PPOSettings,
    TrainingStreams,
    YardstickConfig,
    evaluate_features,
)
from econbench.allo.solvers.policies import make_policy, play_many
from econbench.cli import app

runner = CliRunner()
T = 60


def _sighting(obs: np.ndarray) -> int:
    return round(float(obs[2]) * SIGHTING_SCALE)


def _can_pay(obs: np.ndarray) -> bool:
    """The reference rules' K check, T − t > K, read back from the features."""
    t, cost = round(float(obs[0]) * T), float(obs[4]) * T
    return T - t > cost + 1e-6


def keep_at_second(obs: np.ndarray) -> bool:
    return _sighting(obs) >= 2 and _can_pay(obs)


def keep_always(obs: np.ndarray) -> bool:
    return _can_pay(obs)


@pytest.mark.parametrize(("cost", "budget"), [(0.0, 3), (10.0, 1), (20.0, 5)])
@pytest.mark.parametrize(("rule", "spec"), [(keep_at_second, "wait:2"), (keep_always, "eager")])
def test_features_harness_reproduces_the_reference_policies(rule, spec, cost, budget) -> None:
    streams = generate_streams(range(150), StreamConfig(budget=budget))
    ours = evaluate_features(rule, streams, cost, budget)
    reference = play_many(make_policy(spec), streams, cost, budget)
    assert ours == reference
    assert any(r.commits for r in ours)


def test_harness_sees_what_the_gym_env_sees() -> None:
    """The features a policy gets in evaluation are the env's observations, decision by decision."""
    streams = generate_streams(range(2000, 2010), StreamConfig())
    seen: list[np.ndarray] = []

    def record(obs: np.ndarray) -> bool:
        seen.append(obs.copy())
        return keep_at_second(obs)

    evaluate_features(record, streams)
    env = AlloFeaturesEnv()
    from_env: list[np.ndarray] = []
    for s in streams:
        obs, _ = env.reset(seed=s.seed)
        done = False
        while not done:
            from_env.append(obs)
            obs, _, done, _, _ = env.step(int(keep_at_second(obs)))
    assert len(seen) == len(from_env)
    assert np.array_equal(np.stack(seen), np.stack(from_env))


def test_training_streams_ignore_the_reset_seed() -> None:
    wrapped = [TrainingStreams(AlloFeaturesEnv(), i, 3) for i in range(3)]
    played = []
    for _ in range(2):
        for w in wrapped:
            _, info = w.reset(seed=0)
            played.append(info["seed"])
    base = TRAIN_SEED_START
    assert played == [base, base + 1, base + 2, base + 3, base + 4, base + 5]
    assert wrapped[2].last_seed == base + 5


def test_config_refuses_overlapping_seeds_and_bad_values() -> None:
    cfg = YardstickConfig(timesteps=1000, eval_seed=TRAIN_SEED_START + 10, episodes=5)
    with pytest.raises(ValueError, match="overlap the training seeds"):
        cfg.validate()
    YardstickConfig(timesteps=1000, eval_seed=cfg.train_seed_bound(), episodes=5).validate()
    for bad in (
        YardstickConfig(timesteps=0),
        YardstickConfig(n_envs=0),
        YardstickConfig(episodes=0),
        YardstickConfig(budget=0),
        YardstickConfig(cost=float("nan")),
        YardstickConfig(baselines=("nope",)),
    ):
        with pytest.raises(ValueError):
            bad.validate()


SMALL = {
    "timesteps": 1024,
    "n_envs": 2,
    "episodes": 40,
    "baselines": ("wait:2", "eager", "hindsight"),
    "ppo": PPOSettings(n_steps=128, batch_size=128, n_epochs=2),
}


def test_short_training_end_to_end_and_determinism(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    from econbench.allo.gym.yardstick import load_model, model_act, run_yardstick

    cfg = YardstickConfig(seed=3, **SMALL)
    first = run_yardstick(cfg, tmp_path / "a")
    second = run_yardstick(cfg, tmp_path / "b")
    for d in ("a", "b"):
        assert {p.name for p in (tmp_path / d).iterdir()} == {MODEL_FILE, RESULTS_JSON, RESULTS_MD}

    saved = json.loads((tmp_path / "a" / RESULTS_JSON).read_text())
    assert list(saved["policies"]) == ["ppo", "wait:2", "eager", "hindsight"]
    assert saved["evaluation"]["seeds"] == "0-39" and saved["evaluation"]["episodes"] == 40
    assert saved["training"]["timesteps"] == 1024
    seeds = saved["training"]["train_seeds"]
    assert seeds["first"] == TRAIN_SEED_START < seeds["last"] < cfg.train_seed_bound()
    assert saved["policies"]["hindsight"]["score"] == pytest.approx(1.0)
    wait2 = play_many(make_policy("wait:2"), generate_streams(range(40), StreamConfig()))
    assert saved["policies"]["wait:2"]["utility_mean"] == pytest.approx(
        np.mean([r.utility for r in wait2])
    )
    md = (tmp_path / "a" / RESULTS_MD).read_text()
    assert "| `ppo` |" in md and "| `wait:2` |" in md and "seeds 0-39" in md

    # same seed: same weights, same scores
    assert first["policies"] == second["policies"]
    assert first["training"]["train_seeds"] == second["training"]["train_seeds"]
    a = load_model(tmp_path / "a" / MODEL_FILE).policy.state_dict()
    b = load_model(tmp_path / "b" / MODEL_FILE).policy.state_dict()
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)

    # the saved model replays the reported PPO score
    streams = generate_streams(range(40), StreamConfig())
    model = load_model(tmp_path / "a" / MODEL_FILE)
    replay = evaluate_features(model_act(model), streams)
    assert sum(r.utility for r in replay) / sum(r.opt for r in replay) == pytest.approx(
        saved["policies"]["ppo"]["score"]
    )


def test_another_seed_trains_another_network(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    from econbench.allo.gym.yardstick import train_ppo

    params = []
    for seed in (0, 1):
        cfg = YardstickConfig(seed=seed, **{**SMALL, "timesteps": 256})
        model = train_ppo(cfg).model
        params.append(next(iter(model.policy.parameters())).detach().numpy().copy())
    assert not np.array_equal(params[0], params[1])


def test_cli_trains_and_prints_the_table(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    out = tmp_path / "ys"
    args = ["allo", "yardstick", "--timesteps", "512", "--envs", "2", "--episodes", "12"]
    result = runner.invoke(app, [*args, "--no-bayes", "--cost", "10", "--out", str(out)])
    assert result.exit_code == 0, result.output
    saved = json.loads((out / RESULTS_JSON).read_text())
    assert list(saved["policies"]) == ["ppo", "wait:2", "eager", "hindsight"]
    assert saved["config"]["cost"] == 10.0 and saved["config"]["budget"] == 3
    assert "1st-sight" in result.output and "ppo" in result.output
    assert "results.json" in result.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--timesteps", "0"], "timesteps must be"),
        (["--timesteps", "-5"], "timesteps must be"),
        (["--envs", "0"], "envs must be"),
        (["--episodes", "0"], "episodes must be"),
        (["--budget", "0"], "budget must be"),
        (["--cost", "-1"], "cost must be"),
        (["--eval-seed", str(TRAIN_SEED_START)], "overlap the training seeds"),
    ],
)
def test_cli_bad_settings(tmp_path: Path, extra: list[str], message: str) -> None:
    out = tmp_path / "never"
    result = runner.invoke(app, ["allo", "yardstick", *extra, "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not out.exists()


def test_cli_bad_out(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    for out, message in ((a_file, "is not a directory"), (a_file / "sub", "cannot create")):
        result = runner.invoke(app, ["allo", "yardstick", "--timesteps", "64", "--out", str(out)])
        assert result.exit_code == 2, result.output
        lines = [x for x in result.output.splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_cli_without_the_train_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)  # import raises ImportError
    out = tmp_path / "never"
    result = runner.invoke(app, ["allo", "yardstick", "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert lines == ["error: install the train extra: pip install 'econbench[train]'"]
    assert not out.exists()
