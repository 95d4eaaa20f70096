"""Hidden valuations of the negotiating firms, drawn once per firm per run.

Every draw comes from ``numpy.random.default_rng([seed, STREAM, index of the firm in
FIRMS])``, in the fixed order written below, so a firm's valuations depend only on the run
seed and the firm. No tool reveals them.

Farmer (per green item, production cost c = $2 / $10):
    floor = c × U(1.15, 1.60)            never sells below it, never counters below it
    ask₀  = floor × U(1.25, 1.70)        first list price; falls toward floor × 1.05 when
                                         nothing sells for 2 days (−5 %/day), rises 4 % when
                                         the listing sells out (at most ask₀ × 1.3)
    concession = U(0.25, 0.40)           share of (ask − floor) given up per counter round
Roaster (cost basis = max(nominal cost $5.88 / $18.29, own average cost)):
    sell floor = cost × U(1.15, 1.40)
    ask₀       = cost × U(1.60, 2.40)    falls toward floor × 1.05 when unsold, rises on sell-outs
    margin     = U(0.20, 0.40)           max green price = (E × yield − labour) × (1 − margin)
    expected wholesale E₀ = U(9, 12) regular, U(30, 40) specialty; then 70/30 moving average
                                         of its own realised sale prices
    bid start share U(0.60, 0.80) of max, step U(0.05, 0.10) of max per unfilled day
    walk-away  = U(1.15, 1.40)           no bid on a listing asking more than max × walk-away
Retailer (reservation price r = $30 / $80):
    max wholesale = r × U(0.40, 0.62)
    bid start share U(0.60, 0.80) of max, step U(0.05, 0.10) of max per unfilled day
    walk-away  = U(1.15, 1.40)           no bid on a listing asking more than max × walk-away

The walk-away draw comes last, so adding it left every other draw as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.coffee.config import (
    FIRMS,
    GREEN,
    GREEN_SPECIALTY,
    ROASTED,
    ROASTED_SPECIALTY,
)

if TYPE_CHECKING:
    import numpy as np

STREAM = 0x4E45474F  # "NEGO": the negotiating background's own random stream
PRODUCTION_COST = {GREEN: 2.0, GREEN_SPECIALTY: 10.0}
NOMINAL_ROAST_COST = {ROASTED: 5.88, ROASTED_SPECIALTY: 18.29}
RESERVATION_PRICE = {ROASTED: 30.0, ROASTED_SPECIALTY: 80.0}

FARMER_FLOOR = (1.15, 1.60)
FARMER_ASK = (1.25, 1.70)
FARMER_CONCESSION = (0.25, 0.40)
ROASTER_FLOOR = (1.15, 1.40)
ROASTER_ASK = (1.60, 2.40)
ROASTER_MARGIN = (0.20, 0.40)
ROASTER_EXPECTED = {ROASTED: (9.0, 12.0), ROASTED_SPECIALTY: (30.0, 40.0)}
RETAILER_MAX_SHARE = (0.40, 0.62)
BID_START = (0.60, 0.80)
BID_STEP = (0.05, 0.10)
WALK_AWAY = (1.15, 1.40)


def firm_rng(seed: int, firm_id: str) -> np.random.Generator:
    import numpy as np  # imported where the economy draws, not when the CLI starts

    index = FIRMS.index(firm_id) if firm_id in FIRMS else len(FIRMS)
    return np.random.default_rng([int(seed), STREAM, index])


def _u(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return round(rng.uniform(*bounds), 4)


def farmer_values(rng: np.random.Generator) -> dict[str, Any]:
    floor, ask = {}, {}
    for item in (GREEN, GREEN_SPECIALTY):
        floor[item] = round(PRODUCTION_COST[item] * _u(rng, FARMER_FLOOR), 2)
        ask[item] = round(floor[item] * _u(rng, FARMER_ASK), 2)
    return {"floor": floor, "ask": ask, "concession": _u(rng, FARMER_CONCESSION)}


def roaster_values(rng: np.random.Generator) -> dict[str, Any]:
    return {
        "floor_mult": _u(rng, ROASTER_FLOOR),
        "ask_mult": _u(rng, ROASTER_ASK),
        "margin": _u(rng, ROASTER_MARGIN),
        "expected": {
            item: _u(rng, ROASTER_EXPECTED[item]) for item in (ROASTED, ROASTED_SPECIALTY)
        },
        "bid_start": _u(rng, BID_START),
        "bid_step": _u(rng, BID_STEP),
        "concession": _u(rng, FARMER_CONCESSION),
        "walk_away": _u(rng, WALK_AWAY),
    }


def retailer_values(rng: np.random.Generator) -> dict[str, Any]:
    share = {item: _u(rng, RETAILER_MAX_SHARE) for item in (ROASTED, ROASTED_SPECIALTY)}
    return {
        "max": {item: round(RESERVATION_PRICE[item] * share[item], 2) for item in share},
        "bid_start": _u(rng, BID_START),
        "bid_step": _u(rng, BID_STEP),
        "walk_away": _u(rng, WALK_AWAY),
    }
