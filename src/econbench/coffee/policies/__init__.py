"""Scripted CoffeeBench policies and the registry that names them.

Every policy acts only through the tools a model has. ``heuristic`` and ``scripted`` mean the
role's policy: for farmers and retailers both name the scripted firm of this project; for
roasters ``heuristic`` is the paper's HeuristicRoaster (exact rules) and ``scripted`` is this
project's adaptive roaster, which also trades specialty coffee.
"""

from __future__ import annotations

from collections.abc import Callable

from econbench.agents.policy import Actor
from econbench.coffee.policies.bargaining import BARGAINING
from econbench.coffee.policies.farmer import ScriptedFarmer
from econbench.coffee.policies.heuristic import HeuristicRoaster, ScriptedRoaster
from econbench.coffee.policies.negotiating import HAGGLE, NEGOTIATING
from econbench.coffee.policies.passive import PassivePolicy
from econbench.coffee.policies.retailer import ScriptedRetailer
from econbench.coffee.policies.strategies import (
    STRATEGY_NAMES,
    StrategyError,
    is_strategy,
    make_strategy,
)
from econbench.suggest import did_you_mean

_REGISTRY: dict[str, dict[str, Callable[[], Actor]]] = {
    "passive": {
        "farmer": PassivePolicy,
        "roaster": PassivePolicy,
        "retailer": PassivePolicy,
    },
    "heuristic": {
        "farmer": ScriptedFarmer,
        "roaster": HeuristicRoaster,
        "retailer": ScriptedRetailer,
    },
    "scripted": {
        "farmer": ScriptedFarmer,
        "roaster": ScriptedRoaster,
        "retailer": ScriptedRetailer,
    },
    "negotiating": NEGOTIATING,  # type: ignore[dict-item]
    "haggle": HAGGLE,  # type: ignore[dict-item]
    "bargaining": BARGAINING,  # type: ignore[dict-item]
}
_SEEDED = ("negotiating", "haggle", "bargaining")
"""Policies with hidden valuations drawn from the run seed and the firm."""

POLICY_NAMES: tuple[str, ...] = tuple(_REGISTRY)


class UnknownPolicyError(ValueError):
    """A policy name that no registry entry (or model provider) knows."""


def make_policy(name: str, role: str, *, seed: int = 0, firm_id: str = "") -> Actor:
    """Build the policy ``name`` for a firm of ``role``. Roaster strategies
    (``markup:X``, ``undercut``, ``hoard``; see ``strategies.py``) exist only for roasters:
    for any other role they are an error, so ``default=markup:2`` fails."""
    if name not in _REGISTRY and is_strategy(name):
        if role != "roaster":
            raise UnknownPolicyError(
                f"'{name}' is a roaster strategy; a {role} cannot play it (give it to "
                "roaster_A or roaster_B, not to 'default')"
            )
        try:
            return make_strategy(name)
        except StrategyError as exc:
            raise UnknownPolicyError(str(exc)) from None
    by_role = _REGISTRY.get(name)
    if by_role is None:
        raise UnknownPolicyError(
            f"unknown policy '{name}'{did_you_mean(name, (*POLICY_NAMES, *STRATEGY_NAMES))}; "
            f"choose one of: {', '.join(POLICY_NAMES)}, a roaster "
            f"strategy ({', '.join(STRATEGY_NAMES)}), or a model "
            "named provider/model (e.g. openai/gpt-5.5, anthropic/claude-sonnet-4-6)"
        )
    if name in _SEEDED:
        return by_role[role](seed=seed, firm_id=firm_id)  # type: ignore[call-arg]
    return by_role[role]()
