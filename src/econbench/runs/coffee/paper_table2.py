"""The paper's own Table 2, as far as its published text states it: what ``paper``-condition
runs are compared with in a report (``econbench.runs.coffee.report.paper_table2``).

Source: I. Sugiura, D. Hattori, K. Araragi, K. Ogawa, S. Onose, T. Makino, T. Usuki, T. Ishida,
"CoffeeBench: Benchmarking Long-Horizon LLM Agents in Heterogeneous Multi-Agent Economies",
arXiv:2606.16613 (2026), https://arxiv.org/abs/2606.16613; blog
https://pub.sakana.ai/coffeebench/. Table 2 (p. 6) reports, per roaster_A model over three
90-day runs (seeds 0-2) with every other firm played by claude-sonnet-4-6: net income
(mean ± sd), cumulative revenue, tool calls, idle days, messages sent and LLM cost per run.

The table itself could not be read here: only the figures the paper's text states are filled
in, each with where it is stated; every other cell is ``None`` and
shown as "–". No figure is estimated. Fill in the rest from the paper's Table 2 when it is at
hand, citing it the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER = "arXiv:2606.16613 (CoffeeBench, Sugiura et al., 2026)"
BACKGROUND = "anthropic/claude-sonnet-4-6"
"""What played the five other firms in every row (the reference's ``default =
"claude-sonnet-4-6"``)."""


@dataclass(frozen=True)
class PaperRow:
    """One row of the paper's Table 2: roaster_A's player and its reported figures."""

    model: str
    """As the paper names it."""
    player: str
    """What plays roaster_A for it in an econbench ``paper`` run (``configs/coffee/paper/``)."""
    net_income_mean: float | None = None
    net_income_sd: float | None = None
    revenue_mean: float | None = None
    tool_calls_mean: float | None = None
    idle_days_mean: float | None = None
    messages_sent_mean: float | None = None
    llm_cost_usd_mean: float | None = None
    source: str = ""
    """Where each figure given is stated."""


ROWS: tuple[PaperRow, ...] = (
    PaperRow(
        "GPT-5.5",
        "openai/gpt-5.5",
        net_income_mean=3109.0,
        messages_sent_mean=140.0,
        source="net income: §5 and §6 ('+$3,109', the best mean); messages: §5.1 / Figure 5 "
        "(140 per run)",
    ),
    PaperRow(
        "Claude Opus 4.7",
        "anthropic/claude-opus-4-7",
        source="second-highest mean net income after GPT-5.5 (§5); no figure stated in the text",
    ),
    PaperRow(
        "Gemini 3.1 Pro",
        "google/gemini-3.1-pro-preview",
        messages_sent_mean=16.0,
        source="messages: §5.1 / Figure 5 (16 per run, with 90 read_message calls)",
    ),
    PaperRow(
        "Kimi K2.6",
        "openai-compatible/moonshotai/kimi-k2.6",
        messages_sent_mean=14.0,
        source="messages: §5.1 / Figure 5 (14 per run)",
    ),
    PaperRow(
        "Claude Haiku 4.5",
        "anthropic/claude-haiku-4-5",
        net_income_mean=-630.0,
        messages_sent_mean=52.0,
        source="net income: §5.2 ('−$630'); messages: §5.1 / Figure 5 (52 per run)",
    ),
)
"""The rows the paper's text says something of, GPT-5.5 and Claude Opus 4.7 first (the two best
means, §5). Claude Sonnet 4.6, GLM-5.1, PassiveRoaster and HeuristicRoaster are in the paper's
Table 2 too, but no figure of theirs was found; the paper says both baselines end with a net
loss (§5) and that GLM-5.1 has the highest revenue (§5)."""

NOTES: tuple[str, ...] = (
    "Partial: the paper's Table 2 itself was not available; only figures its text states are "
    "given, '–' where none was found. Claude Opus 4.7 has the second-best mean net income (§5). "
    "Rows without any figure (Claude Sonnet 4.6, GLM-5.1, PassiveRoaster, HeuristicRoaster) "
    "are left out; the paper says both baselines end with a net loss and GLM-5.1 has the "
    "highest revenue.",
)
