"""The bargaining background (docs/coffeebench.md §12), the default: the negotiating firms'
routines, with answers set by the market each firm sees and its own concession schedule
rather than by a hidden number a proposer could bisect.
"""

from __future__ import annotations

from econbench.coffee.policies.bargaining.firms import (
    BARGAINING,
    BargainingFarmer,
    BargainingRetailer,
    BargainingRoaster,
)

__all__ = ["BARGAINING", "BargainingFarmer", "BargainingRetailer", "BargainingRoaster"]
