"""PassiveRoaster (docs/coffeebench.md §11): always waits. Usable for any role."""

from __future__ import annotations

from typing import Any

from econbench.agents.policy import Routine, ScriptedPolicy
from econbench.agents.tools import ToolCall


class PassivePolicy(ScriptedPolicy):
    name = "passive"

    def routine(self, observation: dict[str, Any]) -> Routine:
        yield ToolCall("wait_for_next_day")
