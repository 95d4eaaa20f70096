"""The settings of a training run, and which seeds each step plays.

The defaults are the paper's recipe (``scripts/rl``: 20 steps × 25 seeds × 4 rollouts, LoRA
r 32 / α 64, clip 0.2, KL 0.05, lr 6e-5, temperature 1.2, one PPO epoch, a privileged critic)
except the action: ``rollout_mode="forced"`` reads KEEP/PASS at one position, which a CPU can
afford; ``"free"`` samples whole replies as the paper did. The prompt is the R0 urn of a
condition of the paper (``econbench.allo.paper.conditions``; ``train_framing``): ``frontier``, N
announced, the paper's Run 2 (``rl_urn_pilot_a2``), or ``no-n``, its Run 1 (``rl_urn_pilot``);
neither states the charge at K = 0, as the paper's rollouts never did
(``tests/allo/data/paper_requests``: ``r0_rl_rollout_n``, ``r0_rl_rollout_no_n``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from econbench.allo.framings.base import Framing
from econbench.allo.game import Game
from econbench.allo.game.stream import (
    EVAL_SEEDS,
    TRAIN_SEED_START,
    StreamConfig,
    generate_stream,
    parse_seeds,
)
from econbench.allo.gym.envs import features_from_view
from econbench.allo.paper.conditions import DEFAULT_CONDITION, get_condition
from econbench.runs.allo.posttrain.returns import true_rate

Critic = Literal["public", "privileged"]
"""What the value baseline sees: the public decision features, or those plus the class's true
draw rate (the paper's asymmetric critic; the policy never sees the rate)."""
RolloutMode = Literal["forced", "free"]
"""How a decision is sampled: KEEP/PASS after ``DECISION:`` (``forced``) or a whole reply read
by the evaluation's R0 parser (``free``)."""
FreeLogp = Literal["mean", "sum"]
"""A free-text decision's log-probability: the mean over its reply tokens (the paper's) or the
sum (the exact sequence log-probability)."""

RESUMABLE = ("steps", "device")
"""Settings that may change when a run is continued (train longer, move to a GPU)."""
_OPEN_RANGE = re.compile(r"^\s*(\d+)\s*-\s*$")


class TrainConfig(BaseModel):
    """Every setting of a training run (the defaults are the paper's recipe)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    steps: int = Field(20, ge=1)
    seeds: str | None = None
    seeds_per_step: int = Field(25, ge=1)
    rollouts: int = Field(4, ge=1)
    lora_r: int = Field(32, ge=1)
    lora_alpha: int = Field(64, ge=1)
    target_modules: str = "all-linear"
    kl: float = Field(0.05, ge=0.0)
    clip: float = Field(0.2, gt=0.0, lt=1.0)
    lr: float = Field(6e-5, gt=0.0)
    temperature: float = Field(1.2, gt=0.0)
    epochs: int = Field(1, ge=1)  # the paper: 3 epochs diverged, every reported run used 1
    minibatches: int = Field(1, ge=1)
    baseline: Literal["value", "mean"] = "value"
    critic: Critic = "privileged"
    rollout_mode: RolloutMode = "forced"
    reply_tokens: int = Field(512, ge=1)  # free-text reply limit (R0's own is 512)
    free_logp: FreeLogp = "mean"
    spelling_coef: float = Field(1.0, ge=0.0)
    value_lr: float = Field(3e-3, gt=0.0)
    value_iters: int = Field(100, ge=1)
    condition: str = DEFAULT_CONDITION
    """The paper's condition whose R0 urn the rollouts show: ``frontier`` (N announced, the
    paper's Run 2) or ``no-n`` (its Run 1); any condition whose R0 is the text urn."""
    cost: float = Field(0.0, ge=0.0)
    budget: int = Field(3, ge=1)
    tasks: int = Field(60, ge=1)
    seed: int = Field(0, ge=0)
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    gradient_checkpointing: bool = False

    @model_validator(mode="after")
    def _check(self) -> TrainConfig:
        used = {s for step in range(self.steps) for s in self.step_seeds(step)}
        clash = sorted(used & set(EVAL_SEEDS))
        if clash:
            raise ValueError(
                f"training seeds overlap the evaluation seeds 2000–2023 ({clash[0]}, …); "
                f"train on seeds from {TRAIN_SEED_START} on"
            )
        self.stream_config()  # raises for an impossible game
        return self

    def seed_list(self) -> list[int] | None:
        """The ``--seeds`` list, or None for an open range (default, or ``"N-"``)."""
        if self.seeds is None or _OPEN_RANGE.match(self.seeds):
            return None
        return parse_seeds(self.seeds)

    def step_seeds(self, step: int) -> list[int]:
        """The stream seeds of step ``step`` (0-based): the next ``seeds_per_step`` of an
        open range (``9000`` on by default, or ``--seeds N-``) or of the list, cycled."""
        n = self.seeds_per_step
        seeds = self.seed_list()
        if seeds is None:
            opened = _OPEN_RANGE.match(self.seeds or "")
            first = int(opened.group(1)) if opened else TRAIN_SEED_START
            start = first + step * n
            return list(range(start, start + n))
        return [seeds[(step * n + i) % len(seeds)] for i in range(n)]

    def stream_config(self) -> StreamConfig:
        return StreamConfig(n_tasks=self.tasks, budget=self.budget)

    @field_validator("condition")
    @classmethod
    def _text_urn_condition(cls, value: str) -> str:
        return check_train_condition(value)

    def framing(self) -> Framing:
        """The R0 framing the rollouts play: the condition's urn."""
        return train_framing(self.condition)

    def comparable(self) -> dict[str, Any]:
        """The settings a resumed run must share with the saved one."""
        return self.model_dump(exclude=set(RESUMABLE))


def check_train_condition(condition: str) -> str:
    """``condition``'s name if its R0 is the text urn (rollouts read a free or forced reply);
    else a one-line ``ValueError``."""
    chosen = get_condition(condition)
    setup = chosen.rungs.get("r0")
    if setup is None or setup.framing != "r0":
        raise ValueError(
            f"condition {chosen.name!r} has no text urn to train on; use frontier (N announced, "
            "the paper's Run 2) or no-n (its Run 1)"
        )
    return chosen.name


def train_framing(condition: str = DEFAULT_CONDITION, *, skin: str = "default") -> Framing:
    """R0 as the paper's RL rollouts showed it (``rl_rollout.collect_batch``): the urn of
    ``condition`` (``frontier``: N announced, Run 2; ``no-n``: Run 1), no charge stated at
    K = 0; ``skin`` for the transfer reskins."""
    return get_condition(check_train_condition(condition)).framing("r0", skin=skin)


def config_features(config: TrainConfig) -> tuple[float, ...]:
    """The critic's inputs at a probe decision (their count sizes the value net)."""
    stream = generate_stream(TRAIN_SEED_START, config.stream_config())
    game = Game(stream, cost=config.cost, budget=config.budget)
    public = tuple(float(x) for x in features_from_view(game.view(), stream.config.early_window))
    if config.critic == "public":
        return public
    return (*public, true_rate(stream, game.turn().cls))
