"""The task stream: generator statistics, trap-early rule, determinism, JSONL, seed parsing."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from econbench.allo.game import hindsight_opt
from econbench.allo.stream import (
    EVAL_SEEDS,
    TRAIN_SEED_START,
    Stream,
    StreamConfig,
    generate_stream,
    generate_streams,
    load_streams,
    parse_seeds,
    save_streams,
)

SEEDS = range(400)


@pytest.fixture(scope="module")
def streams() -> list[Stream]:
    return generate_streams(SEEDS)


def test_same_seed_same_stream_and_seeds_differ() -> None:
    assert generate_stream(7) == generate_stream(7)
    assert generate_stream(7).classes != generate_stream(8).classes


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


def test_redraws_happen_and_conditioning_is_off_without_trap_early() -> None:
    free = generate_streams(range(300), StreamConfig(trap_early=False))
    no_early_trap = np.mean([all(s.is_hot(c) for c in s.classes[:3]) for s in free])
    assert abs(no_early_trap - 0.85**3) < 0.08
    assert all(s.redraws == 0 for s in free)
    assert np.mean([s.redraws for s in generate_streams(range(300))]) > 1.0


def test_fallback_overwrites_an_early_position() -> None:
    cfg = StreamConfig(max_redraws=0, hot_mass=0.99)
    streams = generate_streams(range(50), cfg)
    forced = [s for s in streams if s.forced_trap]
    assert len(forced) > 30
    for s in streams:
        assert any(not s.is_hot(c) for c in s.classes[:3])


def test_budget_sets_the_early_window() -> None:
    for s in generate_streams(range(100), StreamConfig(budget=1)):
        assert not s.is_hot(s.classes[0])
    five = generate_streams(range(200), StreamConfig(budget=5))
    assert all(any(not s.is_hot(c) for c in s.classes[:5]) for s in five)
    assert not all(any(not s.is_hot(c) for c in s.classes[:3]) for s in five)


def test_jsonl_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    streams = generate_streams(range(5), StreamConfig(n_tasks=20, budget=2))
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
