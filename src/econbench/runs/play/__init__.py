"""A person plays a seat a model would play: the CoffeeBench firm of ``econbench coffee play``.

The person sits behind :class:`econbench.agents.models.human.HumanProvider`, so they play
through econbench's own agent loop and everything a model run has (the clock, the action
budget, wakes, the call record, checkpoints, resume) holds for them unchanged. This package
holds what is theirs alone: where they sit (:mod:`.seat`: the bridge between the run's thread
and the person's), how their typed commands become tool calls (:mod:`.commands`), the
terminal (:mod:`.terminal`) and the browser page (:mod:`.browser`) they play in, and the
CoffeeBench firm's live panels (:mod:`.coffee_panels`) and command (:mod:`.coffee_play`).
"""
