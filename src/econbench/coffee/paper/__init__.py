"""The reference economy of the CoffeeBench paper, reproduced as a pure state machine.

This package backs econbench's `paper` condition: the same economy as the paper's own code
(SakanaAI/CoffeeBench, Apache-2.0) — the same mechanics to the cent, the same random draws,
the same texts a model sees, the same clock and scheduling — but with no model, provider,
file, or printing code in it. The run layer owns the agents and drives the economy through
`economy.PaperEconomy` (`start`, `next_wakes`, `apply`, `finish`).

Each module names the reference file it ports; each function's docstring names the
reference function it reproduces.
"""
