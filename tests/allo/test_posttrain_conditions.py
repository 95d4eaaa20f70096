"""Post-training shows the urn of the condition it claims (issue 24): the paper's rollout
prompts, byte for byte, for its Run 2 (``frontier``, N announced) and Run 1 (``no-n``)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from tests.allo.paper_conformance import fixture

from econbench.allo.game import Game
from econbench.allo.game.stream import StreamConfig, generate_stream
from econbench.runs.allo.posttrain.config import TrainConfig, train_framing

ROLLOUT_FILES = {"frontier": "r0_rl_rollout_n", "no-n": "r0_rl_rollout_no_n"}
"""The paper's ``rl_rollout.collect_batch`` requests (Run 2 and Run 1), captured from its code."""


@pytest.mark.parametrize(("condition", "file"), sorted(ROLLOUT_FILES.items()))
def test_rollouts_open_with_the_papers_prompt(condition: str, file: str) -> None:
    framing = TrainConfig(model="m", condition=condition).framing()
    for episode in fixture.episodes(file):
        messages = episode.requests[0]["body"]["messages"]
        stream = generate_stream(episode.unit.seed, StreamConfig())
        ep = framing.episode(stream, 0.0, 3)
        first = ep.observation([], ep.begin_turn(Game(stream).turn(), 3))
        assert [m["role"] for m in messages] == ["system", "user"]
        assert ep.system_prompt() == messages[0]["content"]
        assert first == messages[1]["content"]


def test_the_two_runs_differ_only_where_the_paper_s_do() -> None:
    stream = generate_stream(9000, StreamConfig())
    run2 = train_framing("frontier").episode(stream, 0.0, 3).system_prompt()
    run1 = train_framing("no-n").episode(stream, 0.0, 3).system_prompt()
    assert "exactly 8 distinct colors" in run2 and "8 distinct" not in run1
    for prompt in (run1, run2):
        assert "cost" not in prompt  # no charge sentence at K = 0, as the paper's rollouts
    charged = train_framing("frontier").episode(stream, 10.0, 3).system_prompt()
    assert "10 point" in charged  # at K > 0 the charge is stated


def test_a_condition_without_a_text_urn_is_refused() -> None:
    with pytest.raises(ValidationError, match="no text urn to train on"):
        TrainConfig(model="m", condition="tool-probe")
    with pytest.raises(ValidationError, match="unknown condition"):
        TrainConfig(model="m", condition="frontiers")
    assert TrainConfig(model="m").condition == "frontier"
