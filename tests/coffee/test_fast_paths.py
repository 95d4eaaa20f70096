"""The state models' shortcut gives what the long way gives: a state model's assignment
stores and marks its field as pydantic's own does, and ``StateJson`` still sees it."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from econbench.coffee.sim import CoffeeRun
from econbench.coffee.state import Clock, Counters, Deal, Record, StateModel
from econbench.runs.coffee.config import RunConfig


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


@pytest.mark.parametrize("model", [Clock, Deal])
def test_assigning_a_deleted_field_takes_pydantics_path(model: type[StateModel]) -> None:
    """A field is recognised by its key in ``__dict__``; one deleted is set the long way."""
    record = model.model_construct(**({} if model is Clock else {"id": "D1"}))
    name = "minute" if model is Clock else "id"
    delattr(record, name)
    setattr(record, name, 3 if model is Clock else "D2")
    assert record.__dict__[name] == (3 if model is Clock else "D2")
    assert name in record.model_fields_set
