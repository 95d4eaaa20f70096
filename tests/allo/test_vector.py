"""The vectorised features game agrees exactly with the scalar env and game."""

from __future__ import annotations

import numpy as np
import pytest

from econbench.allo.game.stream import StreamConfig, generate_streams
from econbench.allo.gym.envs import AlloFeaturesEnv
from econbench.allo.gym.vector import VectorFeaturesGame
from econbench.allo.solvers.policies import make_policy, play_many


@pytest.mark.parametrize("mode", ["collects", "stream"])
@pytest.mark.parametrize(("cost", "budget"), [(0.0, 3), (2.3, 1), (10.0, 5)])
def test_vector_matches_scalar_env(mode: str, cost: float, budget: int) -> None:
    seeds = list(range(40))
    vec = VectorFeaturesGame(
        StreamConfig(budget=budget), cost=cost, budget=budget, reward_mode=mode
    )
    obs = vec.reset(seeds)
    envs = [
        AlloFeaturesEnv(cost=cost, budget=budget, config={"budget": budget}, reward_mode=mode)
        for _ in seeds
    ]
    scalar_obs = np.stack([e.reset(seed=s)[0] for e, s in zip(envs, seeds, strict=True)])
    assert np.array_equal(obs, scalar_obs)
    rng = np.random.default_rng(1)
    done = np.zeros(len(seeds), dtype=bool)
    returns = np.zeros(len(seeds))
    steps = 0
    while not done.all():
        actions = (rng.random(len(seeds)) < 0.25).astype(np.int64)
        obs, reward, new_done, _ = vec.step(actions)
        for i, env in enumerate(envs):
            if done[i]:
                assert reward[i] == 0.0 and not obs[i].any()
                continue
            o, r, term, _, _ = env.step(int(actions[i]))
            assert np.array_equal(o, obs[i]) and r == reward[i] and term == new_done[i]
        returns += reward
        done = new_done
        steps += 1
    assert steps > 3
    results = vec.results()
    assert [r.to_dict() for r in results] == [e.result().to_dict() for e in envs]
    np.testing.assert_allclose(returns, [r.utility for r in results])


def test_vector_plays_wait_policy_like_the_game() -> None:
    streams = generate_streams(range(100))
    vec = VectorFeaturesGame()
    vec.reset(streams)
    while not vec.done.all():
        vec.step((vec.sightings() >= 2).astype(np.int64))
    want = play_many(make_policy("wait:2"), streams)
    assert [r.to_dict() for r in vec.results()] == [r.to_dict() for r in want]


def test_vector_rejects_bad_actions() -> None:
    vec = VectorFeaturesGame()
    vec.reset([1, 2])
    with pytest.raises(ValueError):
        vec.step([0, 2])
    with pytest.raises(ValueError):
        vec.step([0])
