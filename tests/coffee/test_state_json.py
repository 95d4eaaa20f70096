"""The checkpoint's state (``CoffeeRun.state_json``): the world as pydantic writes it, the
run's own state after it, read back into the same run; a lone surrogate a model put into
the state is escaped rather than failing the checkpoint."""

from __future__ import annotations

import json

import pytest

from econbench.coffee.events import NullSink
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.state import Clock, Message
from econbench.runs.coffee.config import RunConfig


def world_text(run: CoffeeRun) -> str:
    """The world's part of ``run.state_json()``."""
    text = run.state_json()
    assert text.startswith('{"world":')
    return text[len('{"world":') : text.index(',"now":')]


@pytest.mark.parametrize("agents", ["scripted", "negotiating"])
def test_state_json_is_pydantics_text_and_reads_back_every_day(agents: str) -> None:
    config = RunConfig(seed=3, days=25, agents={"default": agents})
    run = CoffeeRun(config, sink=NullSink())
    days: list[int] = []

    def check(day: int) -> None:
        text = run.state_json()
        assert world_text(run) == run.world.state.model_dump_json(), day
        data = json.loads(text)
        assert data | {"world": None} == {"world": None} | run.state_dict_without_world()
        copy = CoffeeRun(config, sink=NullSink())
        copy.load_state(data)
        assert copy.world.state == run.world.state, day
        assert copy.state_json() == text, day
        days.append(day)

    run.run(on_day=check)
    assert days == list(range(1, 26))


def test_a_change_after_a_checkpoint_is_in_the_next() -> None:
    run = CoffeeRun(RunConfig(days=3), sink=NullSink())
    run.run()
    before = run.state_json()
    deal = next(iter(run.world.state.deals.values()))
    deal.returned_qty += 1
    after = run.state_json()
    assert after != before
    assert world_text(run) == run.world.state.model_dump_json()


def test_a_lone_surrogate_in_the_state_is_escaped() -> None:
    run = CoffeeRun(RunConfig(days=2), sink=NullSink())
    run.run()
    run.world.state.messages["M1"] = Message(
        id="M1", sender="a", recipient="b", title="t", body="hi \ud83d", day=1, minute=600
    )
    text = run.state_json()
    text.encode("utf-8")  # valid UTF-8: the surrogate is written as an escape
    assert json.loads(text)["world"]["messages"]["M1"]["body"] == "hi \ud83d"
    run.world.state.messages["M1"].body = "fine"
    assert world_text(run) == run.world.state.model_dump_json()


def test_assigning_a_non_field_is_refused() -> None:
    with pytest.raises(ValueError, match="no field"):
        Clock().not_a_field = 1  # type: ignore[attr-defined]


def test_a_scripted_run_checkpoints_every_30th_day_and_its_last() -> None:
    """No model plays, so a day costs milliseconds to redo (SCRIPTED_DAYS_PER_CHECKPOINT)."""
    days: list[int] = []
    run = CoffeeRun(
        RunConfig(seed=3, days=65),
        sink=NullSink(),
        on_checkpoint=lambda r: days.append(r.world.day),
    )
    run.run()
    assert days == [30, 60, 65]
