"""The hardened condition's texts start from the reference's (econbench issue 25), and
``docs/coffee_conditions.md``, their diff against the paper condition's, is current.

The hardened system prompt keeps the reference's sentences the issue names (the anti-idle
instruction, the one-sentence preface, "no human user", the strategic context, the price
anchors, the festival calendar, the retailers' starting prices), word for word as the paper
condition sends them; its numbers still come from the run's economy; the hardened LLM agent
opens with the day-0 message while AlloBench's agents open as before.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import pytest
from tests.coffee.conftest import make_world

from econbench.agents.models.registry import register_scripted
from econbench.agents.models.retry import ConcurrencyLimiter
from econbench.agents.models.scripted import ScriptedModel
from econbench.agents.policy import Observation
from econbench.agents.react import LLMAgent
from econbench.coffee.config import EconomyConfig, WorldConfig, role_of
from econbench.coffee.paper import prompts as paper_prompts
from econbench.coffee.paper.economy import build_economy
from econbench.coffee.paper.tools import tool_specs as paper_tool_specs
from econbench.coffee.prompts import DAY0_MESSAGE, VARIANTS, system_prompt
from econbench.coffee.toolkit import toolkit_class
from econbench.runs.coffee.agents import model_policy
from econbench.runs.coffee.config import RunConfig

ROOT = Path(__file__).resolve().parents[2]
FIRMS = ("farmer_A", "roaster_A", "retailer_B")

KEPT = [
    # the one-sentence preface and the anti-idle instruction
    "Before every tool call, briefly state in one sentence what you intend to do and why.",
    "Do NOT prematurely give up active management — neither when a setback feels "
    "unrecoverable (cash positive ≠ failure; counterparties recover; markets re-open after "
    'festival windows) nor when current operations look "stable on autopilot"',
    "Treat every business day as live and continue placing offers, adjusting prices, and "
    "chasing receivables until the run ends.",
    "There is no human user.",
    # the strategic-context block
    "Strategic context (informational; the harness does not prescribe a strategy):",
    "- Repeat play: the marketplace has 5 other businesses besides you, all available every day.",
    # the catalogue's price anchors
    "Real-world farm cost ~$1-3/kg, wholesale market $2-5/kg.",
    "Effective COGS ~$5-6/kg; typical wholesale $8-15/kg, retail $15-25/kg.",
    "Real-world specialty green $8-15/kg.",
    "Effective COGS ~$18/kg (specialty green @ $10 + labor $5, /0.82 yield)",
    # the festival calendar, by name
    "- `spring_break` — days 40–53 (14-day window)",
    # the retailers' starting prices
    "Starts with `roasted_coffee_kg` priced at $18/kg and `roasted_specialty_kg` priced at "
    "$50/kg by default",
    # the day-0 start
    "Initial endowment:",
]


def _script():
    spec = importlib.util.spec_from_file_location(
        "coffee_condition_diff", ROOT / "scripts/coffee_condition_diff.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_condition_diff_is_current() -> None:
    committed = (ROOT / "docs/coffee_conditions.md").read_text(encoding="utf-8")
    assert committed == _script().render(), (
        "docs/coffee_conditions.md is stale: run python scripts/coffee_condition_diff.py"
    )


def test_the_diff_covers_every_text_of_both_conditions() -> None:
    doc = _script().render()
    for heading in ("## System prompt", "## Day-0 message", "## Tool descriptions"):
        assert heading in doc
    for name in toolkit_class("roaster").tool_specs():
        assert f"### {name}\n" in doc, name
    assert "-  Read your morning observation above" in doc  # the paper's day-0 line, removed
    assert "+  Read your morning observation below" in doc


@pytest.mark.parametrize("firm", FIRMS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_hardened_prompt_keeps_the_references_sentences(firm: str, variant: str) -> None:
    hardened = system_prompt(firm, WorldConfig(), variant)
    paper = paper_prompts.system_prompt(firm)
    for sentence in KEPT:
        assert sentence in paper, f"not the reference's: {sentence!r}"
        assert sentence in hardened, f"dropped: {sentence!r}"


def test_the_revenue_pressure_variant_is_the_references_framing() -> None:
    hardened = system_prompt("roaster_A", WorldConfig(), "revenue_pressure")
    framing = paper_prompts.SCORE_FRAMING_REVENUE_PRESSURE.format(target_usd=50_000)
    assert framing in hardened
    assert "net_income = revenue" not in hardened
    assert "net_income = revenue" in system_prompt("roaster_A", WorldConfig())


def test_the_hardened_prompt_states_the_hardened_rules() -> None:
    text = system_prompt("roaster_A", WorldConfig())
    for rule in (
        "$22.50/kg `green_coffee_kg`, $60.60/kg `green_specialty_kg`, $30.00/kg "
        "`roasted_coffee_kg`, $80.00/kg `roasted_specialty_kg`",  # §4 ceilings
        "Goods agreed on day 89, the last day, could not arrive before the run ends",  # §4
        "posting the same item again updates that listing",  # one listing per item
        "roasted_coffee_kg $5.88/kg, roasted_specialty_kg $18.29/kg",  # §8 closing valuation
        "is charged as `closing_opex`",  # §8 closing opex
        "only kg of that delivery you still hold",  # §6 return lots
        "Goods on the road spoil too, at the seller's cost",  # §8 transit spoilage
        "in whole kg (the fraction of a kg is carried to the next evening)",  # §8
        "late fees on the unpaid principal",  # §6
        "A wake never moves your clock back",  # §3
        "20 actions/day, a hard limit",  # §3
        "BUY 30 kg green_coffee_kg at $2.40 terms 30",  # the proposal convention
    ):
        assert rule in text, rule
    assert "<context_summary>" not in text  # hardened's summaries are headed otherwise
    assert "DNF" not in text
    retailer = system_prompt("retailer_A", WorldConfig())
    assert "`set_retail_price(item_id, price_per_unit)`" in retailer  # the tool's argument


def test_numbers_come_from_the_runs_economy() -> None:
    econ = EconomyConfig(
        festival_days=(30, 35),
        start_retail_prices={"roasted_coffee_kg": 20.0, "roasted_specialty_kg": 55.5},
        spoilage_rate=0.01,
        roast_daily_cap_kg=60,
    )
    text = system_prompt("roaster_A", WorldConfig(days=60, economy=econ))
    assert "- `spring_break` — days 30–35 (6-day window)" in text
    assert "priced at $20/kg and `roasted_specialty_kg` priced at $55.50/kg" in text
    assert "spoils at 1.0%/day" in text
    assert "SHARE one 60 kg/day total green-input cap" in text
    assert "The simulation runs for 60 days (day 0 to day 59)." in text
    assert "Goods agreed on day 59, the last day," in text
    assert "spring_break` — days 40–53" not in text


@pytest.mark.parametrize("firm", FIRMS)
def test_every_tool_starts_from_the_references_description(firm: str) -> None:
    """Each hardened tool description opens with the reference's first sentence, except where
    the hardened tool's result differs from what that sentence says."""
    reworded = {"view_trial_balance"}  # its result is another table than the reference's
    books = build_economy(0, 90).business_apps[firm]
    paper = {s.name: s for s in paper_tool_specs(books)}
    hardened = toolkit_class(role_of(firm)).tool_specs()
    assert set(paper) == set(hardened)
    for name, spec in paper.items():
        text = " ".join(inspect.cleandoc(spec.description).split())
        first = re.split(r"(?<=[.!?]) ", text)[0]
        if name in reworded:
            assert first not in hardened[name].description, f"{name}: drop it from reworded"
        else:
            assert hardened[name].description.startswith(first), name


def test_the_hardened_llm_agent_opens_with_the_day0_message() -> None:
    seen: list[list] = []

    def brain(messages, tools):
        seen.append(list(messages))
        return "thinking"

    model = register_scripted("condition-diff-day0", brain)
    config = RunConfig(agents={"roaster_A": model})
    agent = model_policy(model, "roaster_A", config, limiter=ConcurrencyLimiter())
    agent.start("roaster_A", "roaster", list(toolkit_class("roaster").tool_specs().values()))
    assert [m.role for m in agent.messages] == ["system", "user"]
    assert agent.messages[1].content == DAY0_MESSAGE
    assert paper_prompts.INITIAL_OBSERVATION.replace("above", "below") == DAY0_MESSAGE
    agent.respond([Observation(_observation())])
    roles = [m.role for m in agent.messages]
    assert roles[:3] == ["system", "user", "user"]  # the day-0 message, then the observation


def test_an_llm_agent_without_an_initial_message_opens_as_before() -> None:
    agent = LLMAgent(ScriptedModel("stub", outputs=[]), system_prompt="s", render_observation=str)
    agent.start("a", "r", [])
    assert [(m.role, m.content) for m in agent.messages] == [("system", "s")]


def _observation() -> dict:
    world, _ = make_world(seed=0, days=5)
    return world.observe("roaster_A")
