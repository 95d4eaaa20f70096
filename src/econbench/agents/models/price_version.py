"""The price table's version, apart from the table (``econbench.agents.models.pricing``).

Every run's metadata names the version, so a run in which no model plays needs it; it should
not have to build the whole table to say which one a model would have been priced with.
Bump it here whenever an entry of the table changes.
"""

from __future__ import annotations

PRICE_TABLE_VERSION = "2026-11-29"
