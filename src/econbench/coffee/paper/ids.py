"""One deterministic source of the ids the reference draws with ``uuid.uuid4()``.

The reference names listings, offers, deals, messages, invoices and journal entries by
``str(uuid.uuid4())[:8]`` (with a prefix for some). Here the market, the books and the
economy share one ``IdSource`` and call ``uuid4()`` exactly where the reference does, so a
run is reproducible and a reference run with ``uuid.uuid4`` patched to the same source
names everything alike.
"""

import random
import uuid
from typing import Any


class IdSource:
    """Version-4 UUIDs drawn from a ``random.Random`` of its own, seeded from the run seed."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(f"coffee-paper-ids:{seed}")

    def uuid4(self) -> uuid.UUID:
        """128 random bits with the version and variant bits set, as ``uuid.uuid4`` does."""
        return uuid.UUID(int=self._rng.getrandbits(128), version=4)

    def state(self) -> list[Any]:
        """The generator's state as JSON-able lists, for a checkpoint."""
        version, internal, gauss_next = self._rng.getstate()
        return [version, list(internal), gauss_next]

    def set_state(self, state: list[Any]) -> None:
        """Restore a state taken by ``state()`` (lists are accepted where tuples were)."""
        version, internal, gauss_next = state
        self._rng.setstate((version, tuple(internal), gauss_next))
