"""Gymnasium environments: conformance, rewards summing to net utility, observations."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import econbench.allo  # noqa: F401  (registers the envs)
from econbench.allo import register_envs
from econbench.allo.game import Game
from econbench.allo.game.stream import StreamConfig, generate_stream
from econbench.allo.gym.envs import AlloFeaturesEnv, AlloR0Env, colour_name
from econbench.allo.solvers.policies import make_policy, play_episode

IDS = ["AlloBench-R0-v0", "AlloBench-Features-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_registered_and_pass_env_checker(env_id: str) -> None:
    register_envs()  # idempotent
    env = gym.make(env_id, cost=3.0, budget=2)
    check_env(env.unwrapped, skip_render_check=True)
    assert env.unwrapped.cost == 3.0 and env.unwrapped.budget == 2


@pytest.mark.parametrize("env_cls", [AlloR0Env, AlloFeaturesEnv])
@pytest.mark.parametrize("mode", ["collects", "stream"])
@pytest.mark.parametrize("cost", [0.0, 7.5])
def test_episode_return_is_net_utility(env_cls, mode: str, cost: float) -> None:  # type: ignore[no-untyped-def]
    env = env_cls(cost=cost, reward_mode=mode)
    rng = np.random.default_rng(0)
    for seed in range(15):
        obs, info = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            assert env.observation_space.contains(obs)
            assert info["cls"] not in env.game.built  # automatic turns are skipped
            obs, reward, done, truncated, info = env.step(int(rng.integers(2)))
            assert not truncated
            total += reward
        assert total == pytest.approx(info["result"]["utility"])
        assert env.observation_space.contains(obs)
        with pytest.raises(RuntimeError):
            env.step(0)


def test_keep_reward_is_what_the_build_collects() -> None:
    env = AlloFeaturesEnv(cost=2.0)
    env.reset(seed=4)
    stream = generate_stream(4)
    c = stream.classes[0]
    _, reward, *_ = env.step(1)
    assert reward == stream.counts()[c] - 2.0


def test_counting_r0_text_describes_the_turn() -> None:
    env = gym.make("AlloBench-R0-Counting-v0", cost=5.0)
    obs, _ = env.reset(seed=2000)
    stream = generate_stream(2000)
    colour = colour_name(stream.classes[0])
    assert obs.startswith(f"Draw 1 of 60: a {colour} ball")
    assert "3 keeps left" in obs and "costs 5 points" in obs and "not kept yet" in obs
    obs, *_ = env.step(1)
    assert "2 keeps left" in obs and f"Kept colours: {colour}." in obs


def _evaluation_user_turns(
    seed: int, cost: float, keep_first: int, protocol: str = "paper"
) -> tuple[str, list[str]]:
    """The system prompt and user turns the runner sends for a scripted KEEP/PASS play."""
    from econbench.allo.episodes.actors import Reply
    from econbench.allo.episodes.runner import play_episode as play_cell_episode
    from econbench.allo.framings import get_framing

    seen: list[str] = []
    system: list[str] = []

    class Recorder:
        name = "recorder"

        def start(self, actor_id, role, tools, *, system_prompt=None, max_tokens=None) -> None:
            system.append(system_prompt)

        def respond(self, inputs):
            seen.append("\n".join(i.text for i in inputs))
            word = "KEEP" if len(seen) <= keep_first else "PASS"
            return Reply(text=f"DECISION: {word}")

    play_cell_episode(
        get_framing("r0", protocol=protocol),
        lambda info: Recorder(),
        generate_stream(seed),
        cost=cost,
        budget=3,
    )
    return system[0], seen


@pytest.mark.parametrize("protocol", [None, "paper", "econbench"])
def test_r0_env_shows_exactly_what_the_evaluation_shows(protocol: str | None) -> None:
    """The default R0 env is the benchmark's observation: same system prompt, same user
    turns (notices of automatic turns included), no sighting counts; the paper's texts unless
    ``protocol`` says otherwise."""
    system, turns = _evaluation_user_turns(2000, 5.0, keep_first=2, protocol=protocol or "paper")
    kw = {} if protocol is None else {"protocol": protocol}
    env = gym.make("AlloBench-R0-v0", cost=5.0, **kw)
    obs, info = env.reset(seed=2000)
    assert info["system_prompt"] == system
    got = [obs]
    done = False
    while not done:
        obs, _, done, _, _ = env.step(1 if len(got) <= 2 else 0)
        if not done:
            got.append(obs)
    assert got == turns
    assert not any("so far" in t or "times" in t for t in got)
    notice = "(Since your last choice: " if protocol != "econbench" else "you already keep"
    assert any(notice in t for t in got)  # automatic turns were shown


def test_features_and_seeding() -> None:
    env = gym.make("AlloBench-Features-v0", config={"n_tasks": 30, "budget": 2}, cost=3.0)
    obs, _ = env.reset(seed=9)
    assert obs.dtype == np.float32 and obs.shape == (6,)
    assert obs[0] == 0.0 and obs[1] == 1.0 and obs[2] == pytest.approx(0.1)
    assert obs[3] == pytest.approx(1 / 8) and obs[4] == pytest.approx(0.1) and obs[5] == 1.0
    again, _ = env.reset(seed=9)
    assert np.array_equal(obs, again)
    first, _ = env.reset(seed=123)
    a = [env.reset()[1]["seed"] for _ in range(3)]
    env.reset(seed=123)
    b = [env.reset()[1]["seed"] for _ in range(3)]
    assert a == b and len(set(a)) == 3 and first is not None


def test_env_plays_the_same_game_as_the_game_module() -> None:
    cfg = StreamConfig()
    env = AlloFeaturesEnv(cost=1.0)
    policy = make_policy("wait:2", cfg)
    for seed in range(10):
        stream = generate_stream(seed)
        want = play_episode(policy, stream, cost=1.0)
        env.reset(options={"stream": stream})
        game = Game(stream, cost=1.0)
        done = False
        while not done:
            while game.turn().has_tool:
                game.step(False)
            keep = policy.decide(game.view())
            game.step(keep)
            *_, done, _, info = env.step(int(keep))
        assert info["result"] == want.to_dict() == game.result().to_dict()


def test_invalid_construction_and_actions() -> None:
    with pytest.raises(ValueError):
        AlloR0Env(budget=0)
    with pytest.raises(ValueError):
        AlloR0Env(reward_mode="dense")
    env = AlloR0Env()
    with pytest.raises(RuntimeError):
        env.step(1)
    env.reset(seed=1)
    with pytest.raises(ValueError):
        env.step(2)


# -- Stable-Baselines3's helpers ---------------------------------------------------------------
# The first test calls stable-baselines3's own ``make_vec_env`` (a pinned ``train`` extra); the
# ones after it do what its ``make_vec_env`` and ``DummyVecEnv`` (2.x) do, step by step.


def test_stable_baselines3_make_vec_env_runs_the_features_env() -> None:
    """(The text envs' ``Text`` spaces are not among the spaces SB3's vector envs take.)"""
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    venv = env_util.make_vec_env("AlloBench-Features-v0", n_envs=2, seed=2000)
    try:
        venv.reset()
        for _ in range(70):  # past the end of an episode: the vector env resets itself
            venv.step(np.ones(2, dtype=np.int64))
        frames = venv.get_images()
        assert len(frames) == 2 and all(f.ndim == 3 and f.dtype == np.uint8 for f in frames)
    finally:
        venv.close()


def _sb3_make_env(env_id: str, env_kwargs: dict | None = None) -> gym.Env:
    """``make_vec_env``'s ``_init``: ``render_mode="rgb_array"`` unless the caller set one, and
    only on a ``TypeError`` a second try without it (any other error is SB3's crash)."""
    env_kwargs = env_kwargs or {}
    kwargs = {"render_mode": "rgb_array", **env_kwargs}
    try:
        env = gym.make(env_id, **kwargs)
    except TypeError:  # pragma: no cover - the envs take render_mode
        env = gym.make(env_id, **env_kwargs)
    return gym.wrappers.RecordEpisodeStatistics(env)  # stands in for SB3's Monitor


def test_make_vec_env_as_stable_baselines3_does() -> None:
    n_envs, seed = 3, 2000
    envs = [_sb3_make_env("AlloBench-Features-v0", {"cost": 2.0}) for _ in range(n_envs)]
    # VecEnv.__init__: one render mode for all, and it must be one the env declares.
    modes = [env.get_wrapper_attr("render_mode") for env in envs]
    assert modes == ["rgb_array"] * n_envs
    assert "rgb_array" in envs[0].get_wrapper_attr("metadata")["render_modes"]
    # DummyVecEnv: seeded first reset, then step with auto-reset on termination.
    obs = np.stack([env.reset(seed=seed + i)[0] for i, env in enumerate(envs)])
    assert obs.shape == (n_envs, 6) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(200):
        for env in envs:
            o, _, terminated, truncated, info = env.step(int(rng.integers(2)))
            if terminated or truncated:
                assert info["episode"]["l"] >= 1  # the statistics wrapper's, not the env's
                assert "utility" in info["result"]
                finished += 1
                o, _ = env.reset()
            assert env.observation_space.contains(o)
    assert finished > 0
    # VecEnv.render / get_images: one HxWx3 uint8 image per env, tiled.
    images = [env.render() for env in envs]
    assert all(img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3 for img in images)
    assert len({img.shape for img in images}) == 1
    assert np.concatenate(images, axis=1).shape[1] == n_envs * images[0].shape[1]
    check_env(gym.make("AlloBench-Features-v0", render_mode="rgb_array").unwrapped)


def test_rgb_array_shows_the_stream_so_far() -> None:
    from econbench.allo.gym.envs import RGB_CELL, RGB_COLOURS

    env = AlloFeaturesEnv(render_mode="rgb_array")
    env.reset(seed=2000)
    stream = env.stream
    first = env.render()
    c = RGB_CELL
    assert first.shape == (stream.config.n_classes * c, stream.config.n_tasks * c, 3)
    cls0 = stream.classes[0]
    cell = first[cls0 * c + c // 2, c // 2]
    assert tuple(cell) == RGB_COLOURS["current"]
    env.step(1)  # keep the first draw's class
    after = env.render()
    assert tuple(after[cls0 * c + c // 2, c // 2]) == RGB_COLOURS["commit"]
    later = [t for t in range(1, env.game.t) if stream.classes[t] == cls0]
    for t in later:  # its later draws, resolved automatically, are collected
        assert tuple(after[cls0 * c + c // 2, t * c + c // 2]) == RGB_COLOURS["collected"]
    with pytest.raises(ValueError, match="render_mode"):
        AlloFeaturesEnv(render_mode="human")


def test_r0_env_takes_the_urns_options() -> None:
    """By default the paper's frontier urn (N announced, no cost sentence at K = 0); the
    no-N urn and the stated charge are options, as in the evaluation."""
    prompt = gym.make("AlloBench-R0-v0").reset(seed=9000)[1]["system_prompt"]
    assert "There are exactly 8 distinct colors" in prompt and "also costs" not in prompt
    no_n = gym.make("AlloBench-R0-v0", announce_n=False).reset(seed=9000)[1]["system_prompt"]
    assert "You do not know in advance how many colors" in no_n
    stated = gym.make("AlloBench-R0-v0", state_cost=True).reset(seed=9000)[1]["system_prompt"]
    assert "KEEPing a ball also costs 0 point(s)" in stated
    with pytest.raises(ValueError, match="protocol 'paper' only"):
        AlloR0Env(protocol="econbench", announce_n=False)
