"""econbench's default generator reproduces the paper's stored episodes.

``data/paper_streams.json`` lists every distinct (seed, generator parameters) → class sequence
found in the paper's stored runs (``runs/*/seed_*/stream.json`` of
github:DragonWrangler25/AlloBench), with the runs it came from: the 24 evaluation streams,
seeds 2000–2023, each stored in 69 run directories (2,232 files in all, the economic surface's
(B, K) cells all holding the B = 3 stream).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from econbench.allo.game.stream import EVAL_SEEDS, StreamConfig, generate_stream

DATA = json.loads((Path(__file__).parent / "data" / "paper_streams.json").read_text())
STREAMS: list[dict[str, Any]] = DATA["streams"]


def test_the_data_covers_the_evaluation_seeds() -> None:
    assert sorted(s["seed"] for s in STREAMS) == EVAL_SEEDS
    assert sum(s["files"] for s in STREAMS) == 2232
    assert sum(r["files"] for r in DATA["runs"].values()) == 2232
    assert STREAMS[0]["classes"][:5] == [6, 0, 4, 4, 7]


@pytest.mark.parametrize("paper", STREAMS, ids=lambda s: f"seed{s['seed']}")
def test_default_generator_reproduces_the_paper_stream(paper: dict[str, Any]) -> None:
    config = StreamConfig(**paper["params"])
    assert config.generator == "paper"
    stream = generate_stream(paper["seed"], config)
    assert list(stream.classes) == paper["classes"]
    assert sorted(stream.hot) == paper["hot"]
    assert stream.counts() == [paper["classes"].count(c) for c in range(8)]
    assert not stream.forced_trap


def test_the_default_config_is_the_papers() -> None:
    params = {tuple(sorted(s["params"].items())) for s in STREAMS}
    assert params == {
        tuple(sorted(StreamConfig().model_dump(include=set(STREAMS[0]["params"])).items()))
    }
    for paper in STREAMS:
        assert list(generate_stream(paper["seed"]).classes) == paper["classes"]
