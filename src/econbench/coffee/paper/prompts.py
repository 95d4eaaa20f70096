"""The paper's system prompt and first observation, byte for byte.

As the reference's ``main.SYSTEM_PROMPT``, ``_operational_mechanics_block``, the
``SCORE_FRAMING_*`` texts, ``_build_score_framing``, ``_format_participants``,
``_format_catalog`` and ``INITIAL_OBSERVATION`` (CoffeeBench commit 71442fb). The long texts live
in ``texts/*.txt`` (stored without their leading and trailing newlines, which are restored here,
so an editor's end-of-file fix cannot change a prompt). :func:`system_prompt` is the string the
reference's ``main.build_run`` formats for one agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from econbench.coffee.paper.records import AgentEndowment, Item
from econbench.coffee.paper.seed import seed_world


@cache
def _text(name: str) -> str:
    """``texts/<name>.txt`` without the one trailing newline the file ends with."""
    raw = resources.files(__package__).joinpath("texts", f"{name}.txt").read_text("utf-8")
    return raw.removesuffix("\n")


SYSTEM_PROMPT: str = "\n" + _text("system_prompt") + "\n"
"""The reference's template; fields: display_name, role, max_days, score_framing, persona,
operational_mechanics, agent_id, participants, catalog."""

SCORE_FRAMING_DEFAULT: str = _text("score_framing_default")
SCORE_FRAMING_REVENUE: str = _text("score_framing_revenue")
SCORE_FRAMING_REVENUE_PRESSURE: str = _text("score_framing_revenue_pressure")
SCORE_FRAMING_REVENUE_MAX: str = _text("score_framing_revenue_max")
SCORE_FRAMING_PEER_REVENUE_MAX: str = _text("score_framing_peer_revenue_max")
SCORE_FRAMING_SURVIVAL_REVENUE_PAIR: str = _text("score_framing_survival_revenue_pair")

KPI_METRICS: tuple[str, ...] = (
    "net_income",
    "revenue",
    "revenue_pressure",
    "revenue_max",
    "peer_revenue_max",
    "survival_revenue_pair",
)

INITIAL_OBSERVATION: str = (
    "Observation: Day 0. Marketplace just opened. Read your morning observation "
    "above for your starting position, then call view_listings to see what's posted "
    "and plan your first day."
)
"""The first user message of every agent (the reference's ``main.INITIAL_OBSERVATION``)."""


def _operational_mechanics_block() -> str:
    """The env's operational constants, disclosed up front (the consumer model stays hidden).

    As the reference's ``main._operational_mechanics_block``.
    """
    return _text("operational_mechanics")


def _build_score_framing(kpi: dict[str, Any] | None, max_days: int = 90) -> str:
    """The paragraph that tells an agent what it is scored on (a prompt-only lever: the
    leaderboard is always true net income).

    As the reference's ``main._build_score_framing``: ``kpi`` is one agent's entry of the
    config's ``kpi`` table (``metric`` and its parameters), ``None`` for the default.
    """
    if kpi is None:
        return SCORE_FRAMING_DEFAULT
    metric = str(kpi.get("metric", "net_income"))
    if metric == "net_income":
        return SCORE_FRAMING_DEFAULT
    if metric == "revenue":
        return SCORE_FRAMING_REVENUE
    if metric == "revenue_pressure":
        return SCORE_FRAMING_REVENUE_PRESSURE.format(target_usd=int(kpi.get("target_usd", 50_000)))
    if metric == "revenue_max":
        return SCORE_FRAMING_REVENUE_MAX.format(max_days=max_days)
    if metric == "peer_revenue_max":
        return SCORE_FRAMING_PEER_REVENUE_MAX.format(
            max_days=max_days,
            affiliate_id=str(kpi.get("affiliate_id", "your peer")),
            affiliate_role=str(kpi.get("affiliate_role", "agent")),
        )
    if metric == "survival_revenue_pair":
        return SCORE_FRAMING_SURVIVAL_REVENUE_PAIR.format(
            max_days=max_days,
            target_usd=int(kpi.get("target_usd", 30_000)),
            peer_id=str(kpi.get("peer_id", "your peer")),
            peer_role=str(kpi.get("peer_role", "agent")),
        )
    raise ValueError(
        f"Unknown KPI metric '{metric}'. Valid: net_income | revenue | "
        f"revenue_pressure | revenue_max | peer_revenue_max | "
        f"survival_revenue_pair."
    )


def _format_participants(endowments: Sequence[AgentEndowment]) -> str:
    """One line per firm (``main._format_participants``)."""
    return "\n".join(f"  - {e.agent_id} ({e.role}, {e.display_name})" for e in endowments)


def _format_catalog(items: Sequence[Item]) -> str:
    """One line per item; consumer-facing items are tagged, but their reservation price is not
    shown (agents discover demand themselves). As ``main._format_catalog``."""
    rows = []
    for item in items:
        tag = "  [consumer-facing]" if item.retail_reservation_price is not None else ""
        rows.append(f"  - {item.id}: {item.name} — {item.description}{tag}")
    return "\n".join(rows)


def system_prompt(agent_id: str, *, max_days: int = 90, kpi: dict[str, Any] | None = None) -> str:
    """The system prompt the reference's ``main.build_run`` gives ``agent_id``.

    ``max_days`` is the run's horizon and ``kpi`` the agent's score-framing override (as
    ``config.kpi[agent_id]``); the catalog and participants are the seeded world's.
    """
    items, endowments = seed_world()
    by_id = {e.agent_id: e for e in endowments}
    if agent_id not in by_id:
        raise ValueError(f"unknown agent {agent_id!r}; choose one of {', '.join(by_id)}")
    endowment = by_id[agent_id]
    return SYSTEM_PROMPT.format(
        display_name=endowment.display_name,
        agent_id=endowment.agent_id,
        role=endowment.role,
        persona=endowment.persona,
        max_days=max_days,
        participants=_format_participants(endowments),
        catalog=_format_catalog(items),
        operational_mechanics=_operational_mechanics_block(),
        score_framing=_build_score_framing(kpi, max_days=max_days),
    )
