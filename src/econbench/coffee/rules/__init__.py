"""The rules of the CoffeeBench economy, one small module per rule.

Each rule is a function of the world (``coffee/world.py``) that the morning or evening
phase, or a tool, applies. Rules book into the firms' ``Books`` and emit events; they never
decide anything for an agent.
"""
