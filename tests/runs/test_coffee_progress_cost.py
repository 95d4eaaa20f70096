"""progress.json's cost is the sum ``run.agent_stats()`` gives, read from the firms that
keep stats only."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from econbench.agents.react import AgentStats
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.run import _priced_cost


def stats_sum(run: object) -> float:
    """What progress.json recorded before: the sum over every firm's stats."""
    stats = CoffeeRun.agent_stats(run).values()  # type: ignore[arg-type]
    return sum(float(s.get("cost_usd_priced_part") or 0.0) for s in stats)


def playing(*costs: float | None) -> object:
    """A run whose firms keep stats with these costs (``None``: a scripted firm)."""
    policies = {
        f"firm_{i}": SimpleNamespace()
        if c is None
        else SimpleNamespace(stats=AgentStats(cost_usd=c))
        for i, c in enumerate(costs)
    }
    return SimpleNamespace(policies=policies)


@pytest.mark.parametrize(
    "costs",
    [
        (None,) * 6,
        (None, 0.1, None, None, 0.2, None),
        (0.3, None, 1e-7, 0.0, None, 2.123456789),
        (0.1,) * 6,
        (None, 0.0, None, None, None, None),
    ],
)
def test_the_cost_is_the_sum_over_every_firm(costs: tuple[float | None, ...]) -> None:
    run = playing(*costs)
    total = _priced_cost(run)  # type: ignore[arg-type]
    assert repr(total) == repr(stats_sum(run))
    assert type(total) is float
