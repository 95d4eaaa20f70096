"""The simulation's shortcuts give what the long way gives: a scripted firm asked through
``decide`` directly makes the calls ``respond`` would make, and a state model's assignment
stores and marks its field as pydantic's own does."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic import BaseModel

from econbench.agents.policy import Input, Reply
from econbench.coffee.events import MemorySink
from econbench.coffee.policies import make_policy
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.state import Clock, Counters, Deal, Record, StateModel
from econbench.runs.coffee.config import RunConfig


def _events(run: CoffeeRun, sink: MemorySink) -> list[dict]:
    run.run()
    return sink.events


def test_deciders_decide_directly_as_respond_would() -> None:
    config = RunConfig(days=12)
    short_sink, long_sink = MemorySink(), MemorySink()
    short = CoffeeRun(config, sink=short_sink)
    long = CoffeeRun(config, sink=long_sink)
    assert short._deciders  # the scripted firms take the short way
    long._deciders = frozenset()  # every firm through respond(inputs)
    assert _events(short, short_sink) == _events(long, long_sink)


def test_a_policy_with_its_own_respond_is_asked_through_it() -> None:
    asked: list[Sequence[Input]] = []
    policy = make_policy("scripted", "roaster", seed=0, firm_id="roaster_A")
    inner = policy.respond

    def respond(inputs: Sequence[Input]) -> Reply:
        asked.append(inputs)
        return inner(inputs)

    policy.respond = respond  # type: ignore[method-assign]
    run = CoffeeRun(RunConfig(days=2), policies={"roaster_A": policy})
    assert "roaster_A" not in run._deciders
    assert "roaster_B" in run._deciders
    run.run()
    assert asked


@pytest.mark.parametrize("model", [Clock, Counters])
def test_state_model_assignment_matches_pydantic(model: type[StateModel]) -> None:
    name = next(iter(model.model_fields))
    ours, theirs = model(), model()
    ours.__setattr__(name, 7)
    BaseModel.__setattr__(theirs, name, 7)
    assert ours.__dict__ == theirs.__dict__
    assert ours.model_fields_set == theirs.model_fields_set == {name}
    assert ours.model_dump_json() == theirs.model_dump_json()


def test_assigning_a_non_field_is_refused_as_pydantic_refuses_it() -> None:
    with pytest.raises(ValueError, match="no field"):
        Clock().not_a_field = 1  # type: ignore[attr-defined]


def test_a_record_assignment_is_still_seen_by_state_json() -> None:
    assert issubclass(Deal, Record)
    run = CoffeeRun(RunConfig(days=3))
    run.run()
    before = run.state_json()
    deal = next(iter(run.world.state.deals.values()))
    deal.returned_qty += 1
    after = run.state_json()
    assert after != before
    assert after == '{"world":' + run.world.state.model_dump_json() + after[after.index(',"now"') :]
