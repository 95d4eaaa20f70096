"""A person playing a CoffeeBench firm: the agent the run builds for ``human:<name>``.

It is the very ``LLMAgent`` a model gets — same system prompt, day-0 message, observations,
tool results and tools — whose provider is a ``HumanProvider`` asking the person's seat. The
run's wrap records each of the person's actions in ``record.sqlite`` the moment it is made,
so a resume replays them (``runs/record_tail.py``) and asks the person only from where they
stopped. A person's conversation is never compacted (``PERSON_CONTEXT_WINDOW``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.agents.models.human import HumanProvider, Seat
from econbench.runs.play.coffee_panels import CoffeePanels
from econbench.runs.play.seat import RemoteSeat

if TYPE_CHECKING:
    from econbench.agents.models.base import ProviderWrap
    from econbench.agents.react import LLMAgent
    from econbench.coffee.world import World
    from econbench.runs.coffee.config import RunConfig

PERSON_ATTEMPTS = 1
"""A person's answer is never retried: a seat raises only ``PlayerLeft``."""


def person_policy(
    actor: str,
    firm_id: str,
    config: RunConfig,
    seat: Seat,
    *,
    wrap: ProviderWrap | None = None,
) -> LLMAgent:
    """The agent through which the person ``actor`` (``human:<name>``) plays ``firm_id``:
    a model's (``runs.coffee.agents.firm_agent``), its provider the person's seat."""
    from econbench.agents.models.base import GenerateConfig
    from econbench.agents.models.human import HUMAN_PREFIX
    from econbench.runs.coffee.agents import firm_agent

    person = HumanProvider(actor.removeprefix(HUMAN_PREFIX), seat)
    return firm_agent(
        person,
        firm_id,
        config,
        wrap=wrap,
        config=GenerateConfig(),
        max_attempts=PERSON_ATTEMPTS,
    )


class CoffeeSeat(RemoteSeat):
    """A remote seat that shows the firm's live panels and clock once the run is built
    (``watch``: the run hands it its world)."""

    def __init__(self, firm_id: str) -> None:
        super().__init__()
        self.firm_id = firm_id

    def watch(self, world: World, firm_id: str) -> None:
        self.context = CoffeePanels(world, firm_id)
