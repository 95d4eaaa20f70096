"""Gymnasium environments for post-training (docs/allobench.md §6): R0 text and numeric features.

``AlloBench-R0-v0`` shows the evaluation's own R0 text (system prompt in ``info`` at reset;
each observation the user turn the runner sends; ``protocol=`` as the evaluation's, the paper's
texts by default); ``AlloBench-R0-Counting-v0`` is an easier
text that states sighting counts, which the evaluation never does.

Both envs step only at decisions: turns whose class already has a tool are resolved
automatically between decisions, and when the budget is spent the rest of the stream is scored
and the episode terminates. Action ``0`` = PASS, ``1`` = KEEP (COMMIT).

Reward (``reward_mode``), both summing to the episode's net utility (collected − K·commits):

- ``"collects"`` (default, the paper's PPO reward): KEEP earns ``collects − K`` where
  ``collects = n_c − sighting + 1`` is what the build collects over the stream; PASS earns 0.
- ``"stream"``: utility as it accrues: the collections of the turns resolved by this step (the
  decided turn and the automatic turns up to the next decision, or to the end), minus K on KEEP.

``info`` holds the seed and the utility so far, the decision's turn, class, sighting and budget
left, and once the episode has ended its result (``info["result"]``, ``EpisodeResult.to_dict``;
``info["episode"]`` is left to the episode-statistics wrappers, Gymnasium's
``RecordEpisodeStatistics`` and Stable-Baselines3's ``Monitor``).

``reset(seed=s)`` plays the stream of seed ``s`` (so ``seed=2000`` is evaluation episode 2000);
``reset()`` without a seed draws the next stream seed from the env's ``np_random``;
``reset(options={"stream": stream})`` plays a given :class:`Stream`. Constructor keywords
(``gymnasium.make(id, cost=…, budget=…, config=…, stream_budget=…)``): build charge K, budget B
(default: the config's), a :class:`StreamConfig` or a dict of its fields (its ``generator``:
``"paper"``, the default, or ``"numpy"``), and ``stream_budget``. B must be ≥ 1.

Streams (``stream_budget``): ``"fixed"`` (default, the paper's protocol and the runner's) draws
the stream of a seed with the config's budget (3 unless set) whatever B is, so
``reset(seed=2000)`` plays the paper's episode 2000 in every (B, K) cell; ``"cell"`` draws it
with B (the trap-early window then follows B). The last feature's window W is the stream's
trap-early window (``config.early_window`` of the stream played).

Features (``AlloBench-Features-v0``, Box [0, 1]^6, float32):
``[t / T, budget_left / B, min(sighting, 10) / 10, unkept classes seen / N, min(K / T, 1),
current class first seen among the first W draws]`` — t is the 0-based turn of the decision.

Rendering (``render_mode``, ``metadata["render_modes"]``): ``"ansi"`` returns the text of the
current decision; ``"rgb_array"`` an image of the stream so far (:func:`render_rgb`: one row per
class, one column per turn; what Stable-Baselines3's ``make_vec_env`` asks for by default, and
what its video recorder and ``VecEnv.render`` tile).

``AlloBench-R0-v0``'s texts take R0's options (``skin``, ``announce_n``, ``state_cost``; see
``framings/urn.py``): by default the paper's frontier urn (N announced, no cost sentence at
K = 0), as the evaluation and the post-training rollouts show it.
"""

from __future__ import annotations

import string
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from econbench.allo.game import EpisodeResult, Game, GameView
from econbench.allo.game.stream import (
    Stream,
    StreamBudget,
    StreamConfig,
    generate_stream,
    stream_config_for,
)

RewardMode = Literal["collects", "stream"]

COLOURS: tuple[str, ...] = (
    "red", "blue", "green", "yellow", "purple", "orange", "black", "white",
    "pink", "brown", "grey", "teal",
)  # fmt: skip
"""Colour names of the default R0 skin (class c is ``COLOURS[c]``; beyond 12: "colour-c")."""

TEXT_CHARSET = string.ascii_letters + string.digits + " .,:;()'-!?/\n"
TEXT_MAX_LENGTH = 1024
EVAL_CHARSET = TEXT_CHARSET + "—+>"
"""The evaluation texts' characters (econbench's notices use an em dash, the paper's read
"already kept -> auto-collected, +1")."""
EVAL_LINE_MAX = 160
"""A generous bound on one line of the evaluation's R0 text."""
N_FEATURES = 6
SIGHTING_SCALE = 10
RENDER_MODES: tuple[str, ...] = ("ansi", "rgb_array")
RGB_CELL = 6
"""Pixels per turn and per class in the ``rgb_array`` image."""
RGB_COLOURS: dict[str, tuple[int, int, int]] = {
    "background": (255, 255, 255),
    "passed": (170, 170, 170),  # drawn, not collected
    "collected": (46, 160, 67),  # drawn and collected (a built class, or the build itself)
    "commit": (31, 90, 200),  # the turn a class was built
    "current": (230, 170, 0),  # the draw being decided
}


def colour_name(cls: int) -> str:
    return COLOURS[cls] if cls < len(COLOURS) else f"colour-{cls}"


def render_r0(view: GameView) -> str:
    """The R0 urn turn, default skin (bag / ball / colour)."""
    colour = colour_name(view.cls)
    kept = sorted(view.built)
    kept_txt = ", ".join(colour_name(c) for c in kept) if kept else "none"
    times = "time" if view.sighting == 1 else "times"
    keeps = "keep" if view.budget_left == 1 else "keeps"
    status = "already kept" if view.cls in view.built else "not kept yet"
    cost = f"{view.cost:g}"
    return (
        f"Draw {view.t + 1} of {view.n_tasks}: a {colour} ball comes out of the bag.\n"
        f"You have seen {colour} {view.sighting} {times} so far (including this draw); "
        f"{colour} is {status}.\n"
        f"You have {view.budget_left} {keeps} left (of {view.budget}). "
        f"Keeping costs {cost} points. Kept colours: {kept_txt}.\n"
        "KEEP or PASS?"
    )


def game_over_text(result: EpisodeResult, items: str) -> str:
    """The last observation of a text env."""
    return (
        f"The game is over. You collected {result.collected} {items} with "
        f"{len(result.commits)} keep(s); net score {result.utility:g}."
    )


def render_rgb(game: Game) -> np.ndarray:
    """The stream so far as an ``(N·c, T·c, 3)`` ``uint8`` image (c = :data:`RGB_CELL`): the
    draw of turn t is a cell in column t on its class's row, coloured by what became of it
    (:data:`RGB_COLOURS`), the turn being decided highlighted."""
    config = game.stream.config
    c = RGB_CELL
    image = np.empty((config.n_classes * c, config.n_tasks * c, 3), dtype=np.uint8)
    image[:] = RGB_COLOURS["background"]

    def paint(t: int, cls: int, colour: str) -> None:
        image[cls * c + 1 : (cls + 1) * c - 1, t * c + 1 : (t + 1) * c - 1] = RGB_COLOURS[colour]

    for rec in game.records:
        paint(
            rec.t, rec.cls, "commit" if rec.commit else "collected" if rec.collected else "passed"
        )
    if not game.done:
        turn = game.turn()
        paint(turn.t, turn.cls, "current")
    return image


def features_from_view(view: GameView, early_window: int) -> np.ndarray:
    """The numeric observation (see the module docstring)."""
    T = view.n_tasks
    unkept_seen = sum(
        1 for c in range(view.n_classes) if view.counts[c] > 0 and c not in view.built
    )
    first = view.first_seen[view.cls]
    early = 1.0 if first is not None and first < early_window else 0.0
    return np.array(
        [
            np.float64(view.t) / T,
            np.float64(view.budget_left) / view.budget,
            np.float64(min(view.sighting, SIGHTING_SCALE)) / SIGHTING_SCALE,
            np.float64(unkept_seen) / view.n_classes,
            min(np.float64(view.cost) / T, 1.0),
            early,
        ],
        dtype=np.float32,
    )


def _as_config(config: StreamConfig | dict[str, Any] | None) -> StreamConfig:
    if config is None:
        return StreamConfig()
    return config if isinstance(config, StreamConfig) else StreamConfig(**config)


class _AlloEnvBase(gym.Env):
    """Shared decision-stepping logic; subclasses choose the observation."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        cost: float = 0.0,
        budget: int | None = None,
        config: StreamConfig | dict[str, Any] | None = None,
        reward_mode: RewardMode = "collects",
        render_mode: str | None = None,
        stream_budget: StreamBudget = "fixed",
    ) -> None:
        self.config = _as_config(config)
        self.cost = float(cost)
        self.budget = self.config.budget if budget is None else int(budget)
        # Streams are drawn as the runner draws them (same stream_budget rule), so that
        # reset(seed=s) plays evaluation stream s of the same (B, K) cell.
        self.stream_budget = stream_budget
        self.config = stream_config_for(self.config, self.budget, stream_budget)
        if self.budget < 1 or self.cost < 0:
            raise ValueError("the gym envs need budget >= 1 and cost >= 0")
        if reward_mode not in ("collects", "stream"):
            raise ValueError("reward_mode must be 'collects' or 'stream'")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be None or one of {', '.join(map(repr, RENDER_MODES))}"
            )
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(2)
        self.game: Game | None = None
        self.stream: Stream | None = None

    def _observe(self) -> Any:
        raise NotImplementedError

    def _info(self) -> dict[str, Any]:
        assert self.game is not None and self.stream is not None
        info: dict[str, Any] = {"seed": self.stream.seed, "utility": self.game.utility}
        if self.game.done:
            # Not "episode": that key is the episode-statistics wrappers' (Gymnasium's
            # RecordEpisodeStatistics refuses an env that sets it, SB3's Monitor overwrites it).
            info["result"] = self.game.result().to_dict()
        else:
            turn = self.game.turn()
            info.update(
                t=turn.t, cls=turn.cls, sighting=turn.sighting, budget_left=self.game.budget_left
            )
        return info

    def _skip_auto(self) -> int:
        """Resolve automatic turns up to the next decision; returns what they collected."""
        assert self.game is not None
        before = self.game.collected
        while not self.game.done and self.game.turn().has_tool:
            self.game.step(False)
        return self.game.collected - before

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if options and "stream" in options:
            stream = options["stream"]
            if not isinstance(stream, Stream):
                stream = Stream.model_validate(stream)
        else:
            stream_seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
            stream = generate_stream(stream_seed, self.config)
        self.stream = stream
        self.game = Game(stream, cost=self.cost, budget=self.budget)
        self._skip_auto()
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.game is None or self.game.done:
            raise RuntimeError("call reset() before step()")
        if not self.action_space.contains(action):
            raise ValueError(f"invalid action {action!r}; use 0 (PASS) or 1 (KEEP)")
        keep = int(action) == 1
        game = self.game
        before = game.collected
        n_commits = len(game.commits)
        game.step(keep)
        collected = game.collected - before + self._skip_auto()
        if self.reward_mode == "collects":
            reward = game.commits[n_commits].collects - self.cost if keep else 0.0
        else:
            reward = collected - (self.cost if keep else 0.0)
        return self._observe(), float(reward), game.done, False, self._info()

    def result(self) -> EpisodeResult:
        assert self.game is not None
        return self.game.result()

    def render(self) -> Any:
        if self.game is None:
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self.game)
        if self.render_mode == "ansi":
            return render_r0(self.game.view()) if not self.game.done else "The game is over."
        return None


class AlloR0Env(_AlloEnvBase):
    """``AlloBench-R0-v0``: the evaluation's R0 text, so that what an agent trains on is what
    the benchmark shows a model. Each observation is the user turn the runner would send at
    that decision: the notices of the automatic turns since the last decision, then the
    decision text (``framings/urn.py``, skin ``skin``, protocol ``protocol``); it never states
    sighting counts. ``info["system_prompt"]`` (at ``reset``) is the evaluation's system prompt."""

    def __init__(
        self,
        skin: str = "default",
        protocol: str = "paper",
        announce_n: bool = True,
        state_cost: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        from econbench.allo.framings.urn import UrnFraming

        options: dict[str, Any] = {"state_cost": state_cost}
        if not announce_n:  # an option of protocol "paper" only (UrnFraming says so)
            options["announce_n"] = False
        self.framing = UrnFraming(skin, protocol=protocol, **options)
        self.episode: Any = None
        self._pending_auto: list[Any] = []
        # A turn carries the notices of every automatic turn since the last decision.
        n_tasks = self.config.n_tasks
        self.observation_space = spaces.Text(
            max_length=EVAL_LINE_MAX * (n_tasks + 1), min_length=1, charset=EVAL_CHARSET
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self.episode, self._pending_auto = None, []
        obs, info = super().reset(seed=seed, options=options)
        info["system_prompt"] = self.episode.system_prompt()
        return obs, info

    def _skip_auto(self) -> int:
        assert self.game is not None and self.stream is not None
        if self.episode is None:
            self.episode = self.framing.episode(self.stream, self.cost, self.budget)
        before = self.game.collected
        while not self.game.done and self.game.turn().has_tool:
            self._pending_auto.append(self.game.turn())
            self.game.step(False)
        return self.game.collected - before

    def _observe(self) -> str:
        assert self.game is not None
        if self.game.done:
            return game_over_text(self.game.result(), self.framing.skin.items)
        notices = [a.notice for a in self.episode.auto_turns(self._pending_auto, True)]
        self._pending_auto = []
        text = self.episode.begin_turn(self.game.turn(), self.game.budget_left)
        return self.episode.observation(notices, text)

    def render(self) -> Any:
        if self.render_mode == "ansi" and self.game is not None and not self.game.done:
            return self.episode.begin_turn(self.game.turn(), self.game.budget_left)
        return super().render()


class AlloR0CountingEnv(_AlloEnvBase):
    """``AlloBench-R0-Counting-v0``: an easier text variant that also states how often the
    current colour has been seen and which colours are kept (the evaluation text does not)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.observation_space = spaces.Text(
            max_length=TEXT_MAX_LENGTH, min_length=1, charset=TEXT_CHARSET
        )

    def _observe(self) -> str:
        assert self.game is not None
        if self.game.done:
            return game_over_text(self.game.result(), "balls")
        return render_r0(self.game.view())


class AlloFeaturesEnv(_AlloEnvBase):
    """``AlloBench-Features-v0``: the numeric-feature variant."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(N_FEATURES,), dtype=np.float32)

    def _observe(self) -> np.ndarray:
        assert self.game is not None
        if self.game.done:
            return np.zeros(N_FEATURES, dtype=np.float32)
        return features_from_view(self.game.view(), self.config.early_window)
