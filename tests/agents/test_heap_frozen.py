"""A model's event loop runs with the objects alive before it left out of the cyclic
collector's passes (``agents.event_loop.heap_frozen``), and puts the collector back after."""

from __future__ import annotations

import gc

import pytest

from econbench.agents.event_loop import heap_frozen, run_closing


class Before:
    """A cycle alive before the loop starts."""

    def __init__(self) -> None:
        self.me = self


def test_a_loop_runs_with_the_earlier_objects_frozen_and_ends_with_none() -> None:
    assert gc.get_freeze_count() == 0
    earlier = Before()
    seen = {}

    async def main() -> int:
        seen["frozen"] = gc.get_freeze_count()
        gc.collect()  # a full pass inside the loop skips what was alive before it
        seen["tracked"] = any(o is earlier for o in gc.get_objects())
        return 7

    assert run_closing(main(), []) == 7
    assert seen["frozen"] > 0 and not seen["tracked"]
    assert gc.get_freeze_count() == 0  # all back in the collector's generations
    assert any(o is earlier for o in gc.get_objects())


def test_the_collector_is_put_back_when_the_loop_raises() -> None:
    async def main() -> None:
        raise ValueError("the run's own error")

    with pytest.raises(ValueError, match="own error"):
        run_closing(main(), [])
    assert gc.get_freeze_count() == 0


def test_objects_the_program_froze_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with heap_frozen():
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen  # not thawed by the block
    finally:
        gc.unfreeze()


def test_garbage_made_during_the_loop_is_still_collected() -> None:
    async def main() -> bool:
        cycle = Before()
        del cycle
        return gc.collect() > 0

    assert run_closing(main(), [])
