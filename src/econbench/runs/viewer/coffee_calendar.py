"""The festival days of a CoffeeBench run, read from its saved config, for the page's charts.

Consumer demand is multiplied on the festival days (``docs/coffeebench.md`` §7), so a
chart's jumps there are the economy, not the agents. The days are a property of the run's
economy: ``economy.festival_days`` and ``festival_factor`` of its ``config.json`` (the
economy's defaults when the config predates them), or, for condition ``paper``, the
reference's fixed calendar. The viewer only reads them; nothing here changes a run.
"""

from __future__ import annotations

from typing import Any


def _pair(value: Any) -> tuple[int, int] | None:
    """``[first, last]`` as whole days, if it is one."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    first, last = value
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (first, last)):
        return None
    return (first, last) if first <= last else None


def festivals(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's festival windows: ``{"first", "last", "factor", "name"}`` each, the days
    inclusive as the economy counts them (the ``day`` of the logs)."""
    from econbench.runs.coffee.config import PAPER_CONDITION, condition_of

    if condition_of(config) == PAPER_CONDITION:
        from econbench.coffee.paper.economy import FESTIVALS

        return [
            {"first": first, "last": last, "factor": factor, "name": name}
            for first, last, factor, name in FESTIVALS
        ]
    from econbench.coffee.config import EconomyConfig

    defaults = EconomyConfig.model_fields
    economy = config.get("economy") if isinstance(config.get("economy"), dict) else {}
    span = _pair(economy.get("festival_days")) or tuple(defaults["festival_days"].default)
    factor = economy.get("festival_factor", defaults["festival_factor"].default)
    return [{"first": span[0], "last": span[1], "factor": factor, "name": "festival"}]
