"""The economy's draws are numpy's generators seeded with the lists docs/coffeebench.md §12
names, each stream independent of the others, and numpy is imported only where they are made.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from econbench.coffee.config import FIRMS, RETAIL_ITEMS, EconomyConfig, WorldConfig, role_of
from econbench.coffee.policies.negotiating.valuations import STREAM, farmer_values, firm_rng
from econbench.coffee.world import initial_state, shipping_outcome

SEEDS = [0, 1, 7, 2**32, 2**63 - 1]


@pytest.mark.parametrize("seed", SEEDS)
def test_demand_noise_and_loyalty_come_from_their_named_streams(seed: int) -> None:
    config = WorldConfig(seed=seed, days=30)
    hidden = initial_state(config).hidden
    demand = np.random.default_rng([seed, 1])
    sd = config.economy.demand_noise_sd
    assert hidden.demand_noise == {
        item: demand.normal(0.0, sd, 30).tolist() for item in RETAIL_ITEMS
    }
    loyalty = np.random.default_rng([seed, 2])
    retailers = [firm for firm in FIRMS if role_of(firm) == "retailer"]
    assert hidden.loyalty == {
        firm: loyalty.uniform(*config.economy.loyalty_range) for firm in retailers
    }


def test_the_same_seed_gives_the_same_draws_and_another_seed_others() -> None:
    def hidden(seed: int, days: int = 90) -> object:
        return initial_state(WorldConfig(seed=seed, days=days)).hidden

    assert hidden(5) == hidden(5)
    assert hidden(5).loyalty != hidden(6).loyalty
    assert hidden(5).demand_noise != hidden(6).demand_noise
    # Streams are independent: drawing more demand noise leaves loyalty as it was.
    assert hidden(5, days=3).loyalty == hidden(5).loyalty


def test_a_shipping_roll_is_keyed_by_seed_deal_and_day_alone() -> None:
    econ = EconomyConfig()
    keys = [(seed, deal, day) for seed in SEEDS for deal in (1, 2, 40) for day in (0, 3, 89)]
    first = [shipping_outcome(seed, deal, day, econ) for seed, deal, day in keys]
    again = [shipping_outcome(seed, deal, day, econ) for seed, deal, day in reversed(keys)]
    assert first == again[::-1]  # no roll depends on another having been drawn
    for (seed, deal, day), outcome in zip(keys, first, strict=True):
        roll = np.random.default_rng([seed, 3, deal, day]).random()
        expected = (
            "lost"
            if roll < econ.ship_loss_prob
            else "delayed"
            if roll < econ.ship_loss_prob + econ.ship_delay_prob
            else "delivered"
        )
        assert outcome == expected, (seed, deal, day)


def test_a_firms_valuations_come_from_its_own_stream() -> None:
    index = FIRMS.index("farmer_B")
    ours = firm_rng(11, "farmer_B").uniform(0.0, 1.0, 5).tolist()
    assert ours == np.random.default_rng([11, STREAM, index]).uniform(0.0, 1.0, 5).tolist()
    assert farmer_values(firm_rng(11, "farmer_B")) == farmer_values(firm_rng(11, "farmer_B"))


def test_numpy_is_imported_where_the_economy_draws() -> None:
    code = (
        "import sys\n"
        "import econbench.coffee.world, econbench.coffee.policies.bargaining\n"
        "print('numpy' in sys.modules)\n"
        "from econbench.coffee.config import WorldConfig\n"
        "econbench.coffee.world.initial_state(WorldConfig(days=2))\n"
        "print('numpy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True"]
