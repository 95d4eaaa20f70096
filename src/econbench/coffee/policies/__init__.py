"""Scripted CoffeeBench policies and the registry that names them.

Every policy acts only through the tools a model has. ``heuristic`` and ``scripted`` mean the
role's policy: for farmers and retailers both name the scripted firm of this project; for
roasters ``heuristic`` is the paper's HeuristicRoaster (exact rules) and ``scripted`` is this
project's adaptive roaster, which also trades specialty coffee.
"""

from __future__ import annotations

from collections.abc import Callable

from econbench.agents.policy import Policy
from econbench.coffee.policies.farmer import ScriptedFarmer
from econbench.coffee.policies.heuristic import HeuristicRoaster, ScriptedRoaster
from econbench.coffee.policies.passive import PassivePolicy
from econbench.coffee.policies.retailer import ScriptedRetailer

_REGISTRY: dict[str, dict[str, Callable[[], Policy]]] = {
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
}

POLICY_NAMES: tuple[str, ...] = tuple(_REGISTRY)


class UnknownPolicyError(ValueError):
    """A policy name that no registry entry (or model provider) knows."""


def make_policy(name: str, role: str) -> Policy:
    """Build the policy ``name`` for a firm of ``role``."""
    by_role = _REGISTRY.get(name)
    if by_role is None:
        raise UnknownPolicyError(
            f"unknown policy '{name}'; choose one of: {', '.join(POLICY_NAMES)}, or a model "
            "named provider/model (e.g. openai/gpt-5.5, anthropic/claude-sonnet-4-6)"
        )
    return by_role[role]()
