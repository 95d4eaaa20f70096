"""The bargaining firms' own draws, made after the negotiating firms' (``negotiating.
valuations``, same stream): so a bargaining firm's floors, maxima and asks are those of the
negotiating firm of the same seed, and only what is new here is drawn anew.

    beta    = U(0.40, 0.80)   the Boulware exponent of its concessions (below 1: slow)
    phase   = U(0, 1)         the phase of its reservation value's slow drift
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

BETA = (0.40, 0.80)


def bargaining_values(rng: np.random.Generator) -> dict[str, Any]:
    return {
        "beta": round(rng.uniform(*BETA), 4),
        "phase": round(rng.uniform(0.0, 1.0), 4),
    }
