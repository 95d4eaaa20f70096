"""The fake servers' prompt-cache model: the shortcut equals comparing with every prompt."""

from __future__ import annotations

import random

from tests.fakes.common import _common_prefix, _longest_shared_prefix


def test_neighbours_in_sorted_order_find_the_longest_shared_prefix() -> None:
    rng = random.Random(0)
    earlier: list[str] = []
    seen: list[str] = []
    for _ in range(400):
        base = rng.choice(seen) if seen and rng.random() < 0.7 else ""
        prompt = base[: rng.randrange(len(base) + 1)] + "".join(
            rng.choice("abc") for _ in range(rng.randrange(1, 12))
        )
        want = max((_common_prefix(prompt, p) for p in seen), default=0)
        assert _longest_shared_prefix(earlier, prompt) == want
        seen.append(prompt)
        assert earlier == sorted(seen)
