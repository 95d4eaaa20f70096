"""The paper's own Table 2, as far as its sources state it: what every CoffeeBench report shows
beside the user's Table 2 (``econbench.runs.coffee.report.paper_table2``), marked as the paper's.

Paper: I. Sugiura, D. Hattori, K. Araragi, K. Ogawa, S. Onose, T. Makino, T. Usuki, T. Ishida,
"CoffeeBench: Benchmarking Long-Horizon LLM Agents in Heterogeneous Multi-Agent Economies",
arXiv:2606.16613 (2026), https://arxiv.org/abs/2606.16613. Its Table 2 (p. 6) reports, per
roaster_A player over three independent 90-day runs (§4: "three runs per configuration",
mean and standard deviation), with every other firm played by Claude Sonnet 4.6 (§4: the
background agents use Claude Sonnet 4.6 unless stated otherwise): net income (mean ± sd),
cumulative revenue, tool calls, idle days, messages sent and LLM cost per run.

Sources checked (issue 28), the only ones at hand:

- **S** — the project's summary of the paper (``/work/shared/seeds/000_…``, a Korean digest
  citing section and page for each statement);
- **R** — the reference implementation, ``github:SakanaAI/CoffeeBench`` at commit 71442fb
  (``experiments/roaster_focal_*.toml``, ``coffeebench/models/``).

Neither holds Table 2's grid itself, so only the figures they state are filled in, each with
where it is stated (:attr:`PaperRow.source`); every other cell is ``None``, shown as "–".
No figure is estimated. Checked against S and R: GPT-5.5 +$3,109 (S §6 p. 10) and 140
messages (S §5.1 pp. 8–9, Figure 5), Claude Haiku 4.5 −$630 (S §5.2 p. 7) and 52 messages,
Gemini 3.1 Pro 16 messages, Kimi K2.6 14 messages (S §5.1, Figure 5) — all as before; the
passive row's net income (R: ``roaster_focal_heuristic.toml``, "~ -$2,764 NI
deterministically") and the two baselines' zero messages and zero API cost (S §4 p. 6; R:
``models/__init__.py``, "$0 API cost") were added.
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER = "arXiv:2606.16613 (CoffeeBench, Sugiura et al., 2026)"
BACKGROUND = "anthropic/claude-sonnet-4-6"
"""What played the five other firms in every row (S §4 p. 5; R's ``[models] default =
"claude-sonnet-4-6"`` in every ``roaster_focal_*.toml``)."""
BACKGROUND_TEXT = "Claude Sonnet 4.6 (a model)"
"""How the report names the paper's background."""
DAYS = 90
SEEDS = (0, 1, 2)
"""Three runs per configuration (S §4 p. 6); R's experiment files use seeds 0, 1, 2."""


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
    """Where each figure given is stated; what the sources say of a row without figures."""

    @property
    def scripted(self) -> bool:
        """A baseline (no model plays roaster_A)."""
        return "/" not in self.player


ROWS: tuple[PaperRow, ...] = (
    PaperRow(
        "GPT-5.5",
        "openai/gpt-5.5",
        net_income_mean=3109.0,
        messages_sent_mean=140.0,
        source="net income: S §6 p. 10 ('+$3,109', the best mean, §5); messages: S §5.1 "
        "pp. 8–9 / Figure 5 (140 per run)",
    ),
    PaperRow(
        "Claude Opus 4.7",
        "anthropic/claude-opus-4-7",
        source="S §5 p. 7: second-highest mean net income after GPT-5.5; no figure stated",
    ),
    PaperRow(
        "Claude Sonnet 4.6",
        "anthropic/claude-sonnet-4-6",
        source="evaluated (S §4 p. 6); no figure stated",
    ),
    PaperRow(
        "Claude Haiku 4.5",
        "anthropic/claude-haiku-4-5",
        net_income_mean=-630.0,
        messages_sent_mean=52.0,
        source="net income: S §5.2 p. 7 ('−$630', idle drift: inactive about 40 of 90 days "
        "on average, not Table 2's idle-day figure); messages: S §5.1 / Figure 5 (52 per run)",
    ),
    PaperRow(
        "Gemini 3.1 Pro",
        "google/gemini-3.1-pro-preview",
        messages_sent_mean=16.0,
        source="messages: S §5.1 / Figure 5 (16 per run, with 90 read_message calls); "
        "mid-ranked net income (S §5)",
    ),
    PaperRow(
        "Kimi K2.6",
        "openai-compatible/moonshotai/kimi-k2.6",
        messages_sent_mean=14.0,
        source="messages: S §5.1 / Figure 5 (14 per run); sixth in net income (S §5.1 p. 9)",
    ),
    PaperRow(
        "GLM-5.1",
        "openai-compatible/z-ai/glm-5.1",
        source="S §5 p. 7: the highest revenue, but not a high net income; no figure stated",
    ),
    PaperRow(
        "PassiveRoaster",
        "passive",
        net_income_mean=-2764.0,
        net_income_sd=0.0,
        messages_sent_mean=0.0,
        llm_cost_usd_mean=0.0,
        source="net income: R experiments/roaster_focal_heuristic.toml ('~ -$2,764 NI "
        "deterministically', so sd 0); a net loss (S §5); no messages and $0: it always "
        "waits (S §4 p. 6; R models/passive_model.py, '$0 API cost')",
    ),
    PaperRow(
        "HeuristicRoaster",
        "heuristic",
        messages_sent_mean=0.0,
        llm_cost_usd_mean=0.0,
        source="a net loss (S §5 p. 7), no figure stated; sends no messages (S §4 p. 6); "
        "$0 API cost (R models/__init__.py)",
    ),
)
"""Every row of the paper's Table 2: its seven models in the order its §4 lists them, then
the two baselines."""

NOTES: tuple[str, ...] = (
    "Partial: the paper's Table 2 grid was not at hand; only the figures its text (S: the "
    "project's summary of the paper) or its reference code (R: github:SakanaAI/CoffeeBench "
    "71442fb) states are given, '–' where none was found; 'source' in the CSV says where each "
    "is stated. No figure is estimated.",
    "What the paper says of the rows without a net income: Claude Opus 4.7 has the "
    "second-best mean (after GPT-5.5), GLM-5.1 the highest revenue, Gemini 3.1 Pro a mid-ranked "
    "net income with few calls and messages, every model beats the passive baseline (§1, "
    "§8), and both baselines end with a net loss.",
)
