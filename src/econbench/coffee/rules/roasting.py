"""Roast output in whole kg, rounded on the firm's running total (docs/coffeebench.md §2).

Rounding each roast on its own would let a roaster beat the yield by roasting in small
lots (1 kg of green at 85 % rounds to 1 kg roasted). Rounding the cumulative output of
each green item instead keeps the total within half a kg of green × yield, however the
roasts are split: the first roast of a run gives exactly what ``round(qty × yield)`` gives.
"""

from __future__ import annotations

from econbench.coffee.demand import round_half_up
from econbench.coffee.state import Firm


def roast_output(firm: Firm, green_item: str, qty: int, yield_: float) -> int:
    """Whole kg of roasted coffee that roasting ``qty`` more kg of ``green_item`` yields."""
    before = firm.roasted_green_by_item.get(green_item, 0)
    return round_half_up((before + qty) * yield_) - round_half_up(before * yield_)


def record_roast(firm: Firm, green_item: str, qty: int) -> None:
    firm.roasted_green_by_item[green_item] = firm.roasted_green_by_item.get(green_item, 0) + qty
    firm.roasted_green_kg += qty
