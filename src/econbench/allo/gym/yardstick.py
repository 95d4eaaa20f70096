"""A classic-RL yardstick for AlloBench (issue 6): PPO learns ``AlloBench-Features-v0``.

Why: the LLM post-training results need a reference for what an ideal learner reaches on the
same game. Stable-Baselines3 PPO (MlpPolicy) learns from scratch on the numeric-feature env in
minutes on a CPU, and is then scored exactly like the reference policies of
``benchmarks/allo_policies.py``: by playing :class:`econbench.allo.game.Game` episodes on the
same evaluation streams (seeds ``eval_seed … eval_seed + episodes − 1``, default 0–999, drawn
with ``StreamConfig()`` whatever B is: the paper's generator and its fixed B = 3 streams, as
the runner and the gym env draw them by default) and aggregating with
:func:`econbench.allo.game.metrics.summarize`.

Choices where the issue is silent:

- **Training streams** come from the seeds ``TRAIN_SEED_START + i + n_envs · k`` (env ``i``,
  its ``k``-th episode): 9000 upwards as the spec says, whatever seed SB3 passes to ``reset``.
  The range is bounded up front (:meth:`YardstickConfig.train_seed_bound`) and must not meet the
  evaluation seeds. ``--seed`` sets the network initialisation and the action sampling only, so
  every seed trains on the same streams.
- **Reward**: the env's default ``"collects"`` reward (a KEEP earns what the build collects, minus
  K) with ``gamma = 1``, so a return is the episode's net utility.
- **Determinism**: ``seed=`` for SB3, one torch thread during training, CPU device, and the
  DummyVecEnv (no subprocesses): the same config gives the same weights and the same results.
- The evaluated policy is the deterministic (arg-max) action of the trained network.
- Baselines: ``bayes``, ``wait:2``, ``eager`` and ``hindsight`` (1.0 by construction), made by
  :func:`econbench.allo.solvers.policies.make_policy` and played by ``play_many`` as the
  benchmark does.

torch and stable-baselines3 are the ``train`` extra: they are imported only when training or
loading a model, and their absence is :class:`TrainExtraMissing` with a one-line hint.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from econbench import __version__
from econbench.allo.game import EpisodeResult, Game
from econbench.allo.game.metrics import summarize
from econbench.allo.game.stream import (
    TRAIN_SEED_START,
    Stream,
    StreamConfig,
    generate_streams,
    stream_config_for,
)
from econbench.allo.gym.envs import AlloFeaturesEnv, features_from_view
from econbench.allo.solvers.policies import make_policy, play_many

TRAIN_EXTRA_HINT = "install the train extra: pip install 'econbench[train]'"
DEFAULT_BASELINES: tuple[str, ...] = ("bayes", "wait:2", "eager", "hindsight")
PPO_NAME = "ppo"
MODEL_FILE = "ppo_model.zip"
RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
MAX_TIMESTEPS = 100_000_000
MAX_ENVS = 256
MAX_EVAL_EPISODES = 1_000_000

FeaturesAct = Callable[[np.ndarray], bool]
"""A policy over the features observation: ``act(obs) -> keep?``."""

ProgressFn = Callable[[int, int], None]
"""``on_progress(timesteps_done, timesteps_total)``, called after every PPO rollout."""


class TrainExtraMissing(RuntimeError):
    """torch or stable-baselines3 is not installed."""


def require_train_extra() -> Any:
    """Import stable-baselines3 (and so torch), or explain how to get them."""
    try:
        import stable_baselines3
        import torch  # noqa: F401
    except ImportError:
        raise TrainExtraMissing(TRAIN_EXTRA_HINT) from None
    return stable_baselines3


@dataclass(frozen=True)
class PPOSettings:
    """PPO hyper-parameters (measured to learn past ``wait:2`` in ~200k steps at K=0, B=3)."""

    learning_rate: float = 3e-4
    n_steps: int = 256  # per env and rollout
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    net_arch: tuple[int, ...] = (64, 64)


@dataclass(frozen=True)
class YardstickConfig:
    """One yardstick run: training budget, evaluation seeds and the game's (K, B)."""

    timesteps: int = 300_000
    seed: int = 0
    n_envs: int = 8
    episodes: int = 1000
    eval_seed: int = 0
    cost: float = 0.0
    budget: int = 3
    baselines: tuple[str, ...] = DEFAULT_BASELINES
    ppo: PPOSettings = field(default_factory=PPOSettings)
    threads: int = 1

    def validate(self) -> None:
        """Raise ``ValueError`` with a one-line reason for any unusable setting."""
        if not 1 <= self.timesteps <= MAX_TIMESTEPS:
            raise ValueError(f"timesteps must be 1 to {MAX_TIMESTEPS:,}, got {self.timesteps}")
        if not 1 <= self.n_envs <= MAX_ENVS:
            raise ValueError(f"envs must be 1 to {MAX_ENVS}, got {self.n_envs}")
        if not 1 <= self.episodes <= MAX_EVAL_EPISODES:
            raise ValueError(f"episodes must be 1 to {MAX_EVAL_EPISODES:,}, got {self.episodes}")
        if self.seed < 0 or self.eval_seed < 0:
            raise ValueError("seeds must be non-negative")
        if self.budget < 1:
            raise ValueError(f"budget must be at least 1, got {self.budget}")
        if not (math.isfinite(self.cost) and self.cost >= 0):
            raise ValueError(f"cost must be a finite number >= 0, got {self.cost}")
        if self.threads < 1:
            raise ValueError("threads must be at least 1")
        for spec in self.baselines:
            make_policy(spec, self.stream_config(), self.cost, self.budget)
        lo, hi = TRAIN_SEED_START, self.train_seed_bound()
        ev = self.eval_seeds()
        if ev.start < hi and lo < ev.stop:
            raise ValueError(
                f"evaluation seeds {ev.start}-{ev.stop - 1} overlap the training seeds "
                f"{lo}-{hi - 1}; evaluate below {lo} or from {hi}"
            )

    def stream_config(self) -> StreamConfig:
        """Streams are drawn as the runner draws them by default (``stream_budget="fixed"``:
        the reference budget 3 whatever the game's B)."""
        return stream_config_for(StreamConfig(), self.budget)

    def eval_seeds(self) -> range:
        return range(self.eval_seed, self.eval_seed + self.episodes)

    def rollout_steps(self) -> int:
        """Timesteps SB3 actually collects: whole rollouts of ``n_steps × n_envs``."""
        per_rollout = self.ppo.n_steps * self.n_envs
        return math.ceil(self.timesteps / per_rollout) * per_rollout

    def train_seed_bound(self) -> int:
        """Every training seed is below this: an env plays at most one episode per step, + 1."""
        return TRAIN_SEED_START + self.n_envs * (self.rollout_steps() // self.n_envs + 1)


class TrainingStreams(gym.Wrapper):
    """Plays the training seeds ``start + index + stride · k`` whatever seed ``reset`` gets.

    Why: SB3 seeds its envs with ``seed + i``, which would replay evaluation streams.
    """

    def __init__(self, env: gym.Env, index: int, stride: int, start: int = TRAIN_SEED_START):
        super().__init__(env)
        self.index, self.stride, self.start = index, stride, start
        self.episodes = 0

    @property
    def last_seed(self) -> int | None:
        if self.episodes == 0:
            return None
        return self.start + self.index + self.stride * (self.episodes - 1)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        stream_seed = self.start + self.index + self.stride * self.episodes
        self.episodes += 1
        return self.env.reset(seed=stream_seed)


# -- evaluation on the reference game ---------------------------------------------------------
def play_features(
    act: FeaturesAct, stream: Stream, cost: float = 0.0, budget: int | None = None
) -> EpisodeResult:
    """Play one :class:`Game` episode, deciding from the env's features of each decision."""
    window = stream.config.early_window
    game = Game(stream, cost=cost, budget=budget)
    return game.play(lambda view: bool(act(features_from_view(view, window))))


def evaluate_features(
    act: FeaturesAct, streams: Sequence[Stream], cost: float = 0.0, budget: int | None = None
) -> list[EpisodeResult]:
    """Play a features policy over many streams (the yardstick's evaluation harness)."""
    return [play_features(act, s, cost, budget) for s in streams]


def model_act(model: Any) -> FeaturesAct:
    """The deterministic (arg-max) action of a trained SB3 model."""

    def act(obs: np.ndarray) -> bool:
        action, _ = model.predict(obs, deterministic=True)
        return int(action) == 1

    return act


def baseline_summaries(
    specs: Sequence[str], streams: Sequence[Stream], cost: float, budget: int
) -> dict[str, dict[str, Any]]:
    """Reference policies on the same streams, scored as ``benchmarks/allo_policies.py`` does."""
    config = streams[0].config
    out = {}
    for spec in specs:
        policy = make_policy(spec, config, cost, budget)
        out[spec] = summarize(play_many(policy, list(streams), cost, budget))
    return out


# -- training ---------------------------------------------------------------------------------
@dataclass
class TrainedPPO:
    """A trained model and how its training went."""

    model: Any
    seconds: float
    timesteps: int
    train_seeds: dict[str, int] = field(default_factory=dict)

    @property
    def steps_per_second(self) -> float:
        return self.timesteps / self.seconds if self.seconds > 0 else float("inf")


def make_train_env(cfg: YardstickConfig) -> Any:
    """``n_envs`` features envs over the training seeds, in one process (deterministic)."""
    require_train_extra()
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    def make(index: int) -> Callable[[], gym.Env]:
        def build() -> gym.Env:
            env = AlloFeaturesEnv(cost=cfg.cost, budget=cfg.budget, config=cfg.stream_config())
            return Monitor(TrainingStreams(env, index, cfg.n_envs))

        return build

    return DummyVecEnv([make(i) for i in range(cfg.n_envs)])


def _progress_callback(total: int, on_progress: ProgressFn) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class _Progress(BaseCallback):
        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            on_progress(min(self.num_timesteps, total), total)

    return _Progress()


def train_ppo(cfg: YardstickConfig, on_progress: ProgressFn | None = None) -> TrainedPPO:
    """Train PPO from scratch on the features env; deterministic given ``cfg``."""
    cfg.validate()
    sb3 = require_train_extra()
    import torch

    env = make_train_env(cfg)
    p = cfg.ppo
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    try:
        model = sb3.PPO(
            "MlpPolicy",
            env,
            learning_rate=p.learning_rate,
            n_steps=p.n_steps,
            batch_size=p.batch_size,
            n_epochs=p.n_epochs,
            gamma=p.gamma,
            gae_lambda=p.gae_lambda,
            clip_range=p.clip_range,
            ent_coef=p.ent_coef,
            policy_kwargs={"net_arch": list(p.net_arch)},
            seed=cfg.seed,
            device="cpu",
            verbose=0,
        )
        callback = _progress_callback(cfg.timesteps, on_progress) if on_progress else None
        start = time.perf_counter()
        model.learn(total_timesteps=cfg.timesteps, callback=callback)
        seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
    wrappers = [e.env for e in env.envs]  # Monitor -> TrainingStreams
    last = [w.last_seed for w in wrappers if w.last_seed is not None]
    seeds = {
        "first": TRAIN_SEED_START,
        "last": max(last),
        "episodes": sum(w.episodes for w in wrappers),
    }
    return TrainedPPO(model, seconds, int(model.num_timesteps), seeds)


def load_model(path: str | Path) -> Any:
    """Load a saved yardstick model (CPU)."""
    sb3 = require_train_extra()
    return sb3.PPO.load(str(path), device="cpu")


# -- the whole yardstick ----------------------------------------------------------------------
def _seed_range(seeds: range) -> str:
    return f"{seeds.start}" if len(seeds) == 1 else f"{seeds.start}-{seeds.stop - 1}"


def run_yardstick(
    cfg: YardstickConfig,
    out: str | Path,
    on_progress: ProgressFn | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Train, evaluate PPO and the baselines on the same seeds, write the files; return results.

    Writes ``ppo_model.zip``, ``results.json`` and ``results.md`` into ``out``.
    """
    cfg.validate()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stage = on_stage or (lambda _: None)
    stage("training")
    trained = train_ppo(cfg, on_progress)
    trained.model.save(str(out / MODEL_FILE))
    seeds = cfg.eval_seeds()
    streams = generate_streams(seeds, cfg.stream_config())
    stage("evaluating")
    start = time.perf_counter()
    ppo = summarize(evaluate_features(model_act(trained.model), streams, cfg.cost, cfg.budget))
    eval_seconds = time.perf_counter() - start
    stage("baselines")
    policies = {PPO_NAME: ppo, **baseline_summaries(cfg.baselines, streams, cfg.cost, cfg.budget)}
    results = {
        "version": __version__,
        "env": "AlloBench-Features-v0",
        "config": asdict(cfg),
        "training": {
            "seconds": trained.seconds,
            "timesteps": trained.timesteps,
            "steps_per_second": trained.steps_per_second,
            "train_seeds": trained.train_seeds,
        },
        "evaluation": {
            "seeds": _seed_range(seeds),
            "episodes": len(seeds),
            "ppo_seconds": eval_seconds,
        },
        "policies": policies,
        "files": {"model": MODEL_FILE, "markdown": RESULTS_MD},
    }
    (out / RESULTS_JSON).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (out / RESULTS_MD).write_text(results_markdown(results), encoding="utf-8")
    return results


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


TABLE_HEADER = (
    "policy",
    "pooled score",
    "per-episode mean [95 % CI]",
    "first-sight rate",
    "trap commits / ep",
    "unused budget / ep",
    "lateness",
    "mean utility",
)


def table_rows(results: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row of :data:`TABLE_HEADER` cells per policy, PPO first."""
    rows = []
    for name, s in results["policies"].items():
        lo, hi = s["score_ci"]
        rows.append(
            (
                name,
                _fmt(s["score"]),
                f"{s['score_mean']:.3f} [{lo:.3f}, {hi:.3f}]",
                _fmt(s["first_sight_rate"]),
                f"{s['trap_commits_mean']:.2f}",
                f"{s['unused_budget_mean']:.2f}",
                _fmt(s["lateness1_mean"], 2),
                f"{s['utility_mean']:.2f}",
            )
        )
    return rows


def results_markdown(results: dict[str, Any]) -> str:
    """The results as a Markdown section: the settings line and one table row per policy."""
    cfg, tr, ev = results["config"], results["training"], results["evaluation"]
    lines = [
        f"### PPO yardstick on {results['env']}, K = {cfg['cost']:g}, B = {cfg['budget']}\n",
        f"PPO (SB3 MlpPolicy, seed {cfg['seed']}, {cfg['n_envs']} envs): "
        f"{tr['timesteps']:,} timesteps in {tr['seconds']:.1f} s "
        f"({tr['steps_per_second']:,.0f} steps/s), training seeds "
        f"{tr['train_seeds']['first']}-{tr['train_seeds']['last']}. "
        f"Evaluated on seeds {ev['seeds']} ({ev['episodes']:,} episodes of the game).\n",
        "| " + " | ".join(TABLE_HEADER) + " |",
        "|" + "---|" * len(TABLE_HEADER),
    ]
    for row in table_rows(results):
        lines.append(f"| `{row[0]}` | " + " | ".join(row[1:]) + " |")
    return "\n".join(lines) + "\n"
