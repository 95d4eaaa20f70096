"""What a CoffeeBench sweep will cost (``econbench sweep --dry-run``; see
:mod:`econbench.runs.cost_estimate` for the bases and the assumptions).

The documented basis is the paper's figures for ``roaster_A`` (the issue quoting it: about
:data:`COFFEE_CALLS_PER_RUN` model calls in a 90-day run, and about
:data:`COFFEE_INPUT_TOKENS_PER_CALL` input tokens per call — the context a firm's conversation
has grown to on average, compaction included), scaled by the run's days and applied to every
firm a model plays (the paper reports roaster_A only; the background firms are assumed to call
as often with prompts as long). A measured basis is per day and per model-played firm.
"""

from __future__ import annotations

from pathlib import Path

from econbench.agents.models.pricing import PriceTable
from econbench.coffee.config import FIRMS, is_model
from econbench.runs.coffee.config import RunConfig
from econbench.runs.cost_estimate import (
    CACHE_HIT_SHARE,
    OUTPUT_TOKENS_PER_CALL,
    CallBasis,
    EntryEstimate,
    EstimateError,
    PlanEstimate,
    actor_estimate,
    measured_basis,
)
from econbench.runs.experiment import Entry
from econbench.runs.layout import SUMMARY, read_json

COFFEE_PAPER_DAYS = 90
COFFEE_CALLS_PER_RUN = 1_000
"""Model calls of roaster_A in one 90-day CoffeeBench run (the paper: ~1,000)."""
COFFEE_INPUT_TOKENS_PER_CALL = 90_000
"""Input (prompt) tokens per roaster_A call, on average over the run (the paper: ~90k)."""


def paper_basis() -> CallBasis:
    return CallBasis(
        calls_per_unit=COFFEE_CALLS_PER_RUN / COFFEE_PAPER_DAYS,
        input_tokens_per_call=COFFEE_INPUT_TOKENS_PER_CALL,
        output_tokens_per_call=OUTPUT_TOKENS_PER_CALL,
        cache_hit_share=CACHE_HIT_SHARE,
        source=(
            f"the paper's roaster_A: ~{COFFEE_CALLS_PER_RUN:,} calls per {COFFEE_PAPER_DAYS}-day "
            f"run, ~{COFFEE_INPUT_TOKENS_PER_CALL:,} input tokens per call; assumed "
            f"{OUTPUT_TOKENS_PER_CALL} output tokens per call, {CACHE_HIT_SHARE:.0%} cache hits"
        ),
    )


def like_basis(run_dir: Path) -> CallBasis:
    """Per day and per model-played firm, from a CoffeeBench run's ``summary.json``."""
    summary = read_json(run_dir / SUMMARY)
    if not isinstance(summary, dict) or not isinstance(summary.get("firms"), dict):
        raise EstimateError(f"--like {run_dir}: not a finished CoffeeBench run (no {SUMMARY})")
    firms = [f for f in summary["firms"].values() if isinstance(f, dict) and f.get("llm_calls")]
    days = float(summary.get("days") or 0)
    total = {
        key: float(sum(f.get(key) or 0 for f in firms))
        for key in ("llm_calls", "input_tokens", "cached_input_tokens", "output_tokens")
    }
    n = max(1, len(firms))
    return measured_basis(
        total["llm_calls"] / n,
        total["input_tokens"] / n,
        total["cached_input_tokens"] / n,
        total["output_tokens"] / n,
        days,
        "day and model-played firm",
        str(run_dir),
    )


def entry_estimate(entry: Entry, basis: CallBasis, prices: PriceTable) -> EntryEstimate:
    config = RunConfig.model_validate(entry.config)
    out = EntryEstimate(entry.id)
    for firm in FIRMS:
        name = config.policy_for(firm)
        if is_model(name):
            out.actors.append(actor_estimate(firm, name, basis, float(config.days), prices))
    return out


def estimate(entries: list[Entry], like: Path | None, prices: PriceTable) -> PlanEstimate:
    """Every entry's calls, tokens and dollars (``Benchmark.estimate``)."""
    basis = like_basis(like) if like is not None else paper_basis()
    return PlanEstimate([entry_estimate(e, basis, prices) for e in entries], basis.source)
