"""The task stream: generator statistics, trap-early rule, determinism, JSONL, seed parsing.

The statistical tests run for both generators (the paper's ``random.Random`` one, the default,
and econbench's numpy one); ``test_paper_streams.py`` checks the paper's stored episodes."""

from __future__ import annotations

import random

import numpy as np
import pytest
from pydantic import ValidationError

from econbench.allo.game import hindsight_opt
from econbench.allo.game.stream import (
    EVAL_SEEDS,
    GENERATORS,
    REFERENCE_BUDGET,
    TRAIN_SEED_START,
    Stream,
    StreamConfig,
    generate_stream,
    generate_streams,
    load_streams,
    parse_seeds,
    save_streams,
    stream_config_for,
)

SEEDS = range(400)
GENS = pytest.mark.parametrize("gen", GENERATORS)


@pytest.fixture(scope="module", params=GENERATORS)
def streams(request: pytest.FixtureRequest) -> list[Stream]:
    return generate_streams(SEEDS, StreamConfig(generator=request.param))


@GENS
def test_same_seed_same_stream_and_seeds_differ(gen: str) -> None:
    cfg = StreamConfig(generator=gen)  # type: ignore[arg-type]
    assert generate_stream(7, cfg) == generate_stream(7, cfg)
    assert generate_stream(7, cfg).classes != generate_stream(8, cfg).classes
    assert generate_stream(7, cfg).config.generator == gen


def test_paper_generator_is_the_default_and_differs_from_numpy() -> None:
    assert StreamConfig().generator == "paper"
    assert generate_stream(2000).classes[:5] == (6, 0, 4, 4, 7)
    numpy = generate_stream(2000, StreamConfig(generator="numpy"))
    assert numpy.classes != generate_stream(2000).classes
    with pytest.raises(ValidationError):
        StreamConfig(generator="torch")  # type: ignore[arg-type]


def test_streams_saved_before_generators_had_names_read_as_numpy() -> None:
    legacy = generate_stream(5, StreamConfig(generator="numpy")).model_dump()
    del legacy["config"]["generator"]
    assert Stream.model_validate(legacy).config.generator == "numpy"
    assert Stream.model_validate(legacy) == generate_stream(5, StreamConfig(generator="numpy"))


def test_stream_config_for_fixed_and_cell() -> None:
    cfg = StreamConfig()
    assert cfg.budget == REFERENCE_BUDGET == 3
    assert stream_config_for(cfg, 1) is cfg
    assert stream_config_for(cfg, 1, "fixed") is cfg
    assert stream_config_for(cfg, 5, "cell") == cfg.model_copy(update={"budget": 5})
    with pytest.raises(ValueError, match="stream_budget"):
        stream_config_for(cfg, 5, "per-b")  # type: ignore[arg-type]


def test_shape_and_hot_set(streams: list[Stream]) -> None:
    for s in streams:
        assert len(s.classes) == 60
        assert len(s.hot) == 3 and len(set(s.hot)) == 3
        assert all(0 <= c < 8 for c in s.classes)
        assert set(s.traps) | set(s.hot) == set(range(8))


def test_trap_early_condition_holds(streams: list[Stream]) -> None:
    for s in streams:
        assert any(not s.is_hot(c) for c in s.classes[:3])
        assert not s.forced_trap


def test_realised_statistics_match_spec(streams: list[Stream]) -> None:
    hot = np.array([s.counts()[h] for s in streams for h in s.hot])
    trap = np.array([s.counts()[c] for s in streams for c in s.traps])
    opt = np.array([hindsight_opt(s) for s in streams])
    # spec: hot ≈ 13–23 per class, traps ≈ 0–6, mean hindsight optimum ≈ 50.3
    assert 16.3 < hot.mean() < 17.3
    assert np.mean((hot >= 11) & (hot <= 24)) > 0.85
    assert 1.5 < trap.mean() < 2.3
    assert np.mean(trap <= 6) > 0.98
    assert (trap == 0).any()
    assert abs(opt.mean() - 50.3) < 0.8
    # labels are shuffled: every class is hot about 3/8 of the time
    freq = np.bincount([h for s in streams for h in s.hot], minlength=8) / len(streams)
    assert np.all(np.abs(freq - 3 / 8) < 0.1)


@GENS
def test_redraws_happen_and_conditioning_is_off_without_trap_early(gen: str) -> None:
    free = generate_streams(range(300), StreamConfig(trap_early=False, generator=gen))  # type: ignore[arg-type]
    no_early_trap = np.mean([all(s.is_hot(c) for c in s.classes[:3]) for s in free])
    assert abs(no_early_trap - 0.85**3) < 0.08
    assert all(s.redraws == 0 for s in free)
    drawn = generate_streams(range(300), StreamConfig(generator=gen))  # type: ignore[arg-type]
    assert np.mean([s.redraws for s in drawn]) > 1.0


@GENS
def test_fallback_overwrites_an_early_position(gen: str) -> None:
    cfg = StreamConfig(max_redraws=0, hot_mass=0.99, generator=gen)  # type: ignore[arg-type]
    streams = generate_streams(range(50), cfg)
    forced = [s for s in streams if s.forced_trap]
    assert len(forced) > 30
    for s in streams:
        assert any(not s.is_hot(c) for c in s.classes[:3])
        assert s.redraws == 0


def test_paper_fallback_draws_the_trap_before_the_position() -> None:
    """With no candidate allowed, the paper draws one more stream, then (right-hand side first)
    the trap class, then the position it overwrites; replayed here with ``random.Random``."""
    cfg = StreamConfig(max_redraws=0, hot_mass=0.99)
    for seed in range(40):
        s = generate_stream(seed, cfg)
        rng = random.Random(seed)
        roles = [True] * 3 + [False] * 5
        rng.shuffle(roles)
        rng.random()
        w = [0.33 if r else 0.01 / 5 for r in roles]
        seq = rng.choices(range(8), weights=w, k=60)
        if s.forced_trap:
            trap = rng.choice([c for c in range(8) if not roles[c]])
            pos = rng.randrange(3)
            seq[pos] = trap
        assert s.classes == tuple(seq)
        assert s.hot == tuple(c for c in range(8) if roles[c])


@GENS
def test_budget_sets_the_early_window(gen: str) -> None:
    for s in generate_streams(range(100), StreamConfig(budget=1, generator=gen)):  # type: ignore[arg-type]
        assert not s.is_hot(s.classes[0])
    five = generate_streams(range(200), StreamConfig(budget=5, generator=gen))  # type: ignore[arg-type]
    assert all(any(not s.is_hot(c) for c in s.classes[:5]) for s in five)
    assert not all(any(not s.is_hot(c) for c in s.classes[:3]) for s in five)


@GENS
def test_empty_early_window_drops_the_condition(gen: str) -> None:
    cfg = StreamConfig(budget=0, generator=gen)  # type: ignore[arg-type]
    streams = generate_streams(range(100), cfg)
    assert all(s.redraws == 0 and not s.forced_trap for s in streams)
    assert any(all(s.is_hot(c) for c in s.classes[:3]) for s in streams)


@GENS
def test_jsonl_round_trip(tmp_path, gen: str) -> None:  # type: ignore[no-untyped-def]
    cfg = StreamConfig(n_tasks=20, budget=2, generator=gen)  # type: ignore[arg-type]
    streams = generate_streams(range(5), cfg)
    path = tmp_path / "streams.jsonl"
    save_streams(path, streams)
    assert len(path.read_text().splitlines()) == 5
    assert load_streams(path) == streams


def test_stream_validation() -> None:
    with pytest.raises(ValidationError):
        StreamConfig(n_hot=8)
    with pytest.raises(ValidationError):
        Stream(seed=0, config=StreamConfig(n_tasks=3), hot=(0, 1, 2), classes=(0, 1))
    with pytest.raises(ValidationError):
        Stream(seed=0, config=StreamConfig(n_tasks=2), hot=(0, 1, 9), classes=(0, 1))
    with pytest.raises(ValueError):
        generate_stream(-1)


def test_seed_constants_and_parsing() -> None:
    assert list(range(2000, 2024)) == EVAL_SEEDS
    assert TRAIN_SEED_START == 9000
    assert parse_seeds("2000-2023") == EVAL_SEEDS
    assert parse_seeds("1,5,9-12") == [1, 5, 9, 10, 11, 12]
    assert parse_seeds(" 3 , 3, 2-3 ") == [3, 2]
    for bad in ["", "1,,2", "5-3", "a", "1-2-3", "-4"]:
        with pytest.raises(ValueError):
            parse_seeds(bad)
