"""What an AlloBench sweep will cost (``econbench sweep --dry-run``; see
:mod:`econbench.runs.cost_estimate` for the bases and the assumptions).

The documented basis is the framing's own texts: one episode of the cell's framing is played
with the :data:`PROBE_POLICY` reference policy (it never builds, so every turn is asked: an
upper bound on a model's calls) and its system prompt, tool schemas and per-turn observations
are measured (at ``CHARS_PER_TOKEN`` characters a token); each asked turn is one model call
whose prompt is everything before it (the conversation grows through the episode). A measured
basis is per episode.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from econbench.agents.models.pricing import PriceTable
from econbench.runs.cost_estimate import (
    CACHE_HIT_SHARE,
    CHARS_PER_TOKEN,
    CallBasis,
    EntryEstimate,
    EstimateError,
    PlanEstimate,
    actor_estimate,
    measured_basis,
)
from econbench.runs.experiment import Entry
from econbench.runs.layout import SUMMARY, read_json

if TYPE_CHECKING:
    from econbench.allo.episodes.runner import CellSpec

ALLO_OUTPUT_TOKENS_PER_CALL = 200
"""AlloBench output tokens per call (econbench's assumption: one decision tool call and a
short reason)."""
PROBE_POLICY = "never"
"""The reference policy whose episode measures a framing: it is asked every turn."""


def framing_basis(entry: Entry) -> CallBasis:
    """Calls and prompt sizes per episode of the entry's framing, from its own texts."""
    from econbench.runs.allo.experiment import cell_of

    spec, _ = cell_of(entry)
    return spec_basis(spec)


def spec_basis(spec: CellSpec) -> CallBasis:
    """Calls and prompt sizes per episode of a cell's framing (and its tasks per episode),
    from its own texts."""
    from econbench.allo.episodes.actors import PolicyActorFactory
    from econbench.allo.episodes.runner import play_episode
    from econbench.allo.game.stream import generate_stream

    framing = spec.make_framing()
    stream = generate_stream(spec.seeds[0], spec.stream_config)
    factory = PolicyActorFactory(
        PROBE_POLICY, spec.stream_config, cost=spec.cost, budget=spec.budget
    )
    episode = play_episode(framing, factory, stream, cost=spec.cost, budget=spec.budget)
    probe = framing.episode(stream, spec.cost, spec.budget)
    fixed = len(probe.system_prompt()) + sum(len(str(t.openai_schema())) for t in probe.tools())
    asked = [t for t in episode.record["turns"] if t.get("observation")]
    prompt_chars, so_far = 0.0, 0.0
    reply_chars = ALLO_OUTPUT_TOKENS_PER_CALL * CHARS_PER_TOKEN
    for turn in asked:  # each call sees the system prompt and every earlier turn
        so_far += len(turn["observation"])
        prompt_chars += fixed + so_far
        so_far += reply_chars
    calls = max(1, len(asked))
    return CallBasis(
        calls_per_unit=calls,
        input_tokens_per_call=prompt_chars / calls / CHARS_PER_TOKEN,
        output_tokens_per_call=ALLO_OUTPUT_TOKENS_PER_CALL,
        cache_hit_share=CACHE_HIT_SHARE,
        source=(
            f"each framing's own texts (one '{PROBE_POLICY}' episode, every turn asked: system "
            "prompt, tools and "
            f"observations at {CHARS_PER_TOKEN:g} characters a token); assumed "
            f"{ALLO_OUTPUT_TOKENS_PER_CALL} output tokens per call, {CACHE_HIT_SHARE:.0%} "
            "cache hits"
        ),
    )


def like_basis(run_dir: Path) -> CallBasis:
    """Per episode, from an AlloBench cell's ``summary.json``."""
    summary = read_json(run_dir / SUMMARY)
    if not isinstance(summary, dict) or "episodes" not in summary:
        raise EstimateError(f"--like {run_dir}: not a finished AlloBench cell (no {SUMMARY})")
    return measured_basis(
        float(summary.get("llm_calls") or 0),
        float(summary.get("input_tokens") or 0),
        float(summary.get("cached_input_tokens") or 0),
        float(summary.get("output_tokens") or 0),
        float(summary.get("episodes") or 0),
        "episode",
        str(run_dir),
    )


def cell_estimate(spec: CellSpec, episodes: int, prices: PriceTable) -> PlanEstimate:
    """The model calls, tokens and dollars of ``episodes`` episodes of one cell (``allo
    run``), measured on the cell's own framing and tasks per episode."""
    out = EntryEstimate(spec.slug())
    if "/" not in spec.policy or episodes <= 0:
        return PlanEstimate([out], "no model calls")
    basis = spec_basis(spec)
    out.actors.append(actor_estimate("cell", spec.policy, basis, float(episodes), prices))
    return PlanEstimate([out], basis.source)


def entry_estimate(entry: Entry, basis: CallBasis | None, prices: PriceTable) -> EntryEstimate:
    spec_policy = entry.config["cell"]["policy"]
    out = EntryEstimate(entry.id)
    if "/" not in spec_policy:  # a reference policy makes no model calls
        return out
    basis = basis or framing_basis(entry)
    episodes = float(len(entry.config["cell"]["seeds"]))
    out.actors.append(actor_estimate("cell", spec_policy, basis, episodes, prices))
    return out


def estimate(entries: list[Entry], like: Path | None, prices: PriceTable) -> PlanEstimate:
    """Every entry's calls, tokens and dollars (``Benchmark.estimate``): a framing is
    measured once for all the cells that share it."""
    measured = like_basis(like) if like is not None else None
    framing_bases: dict[tuple[Any, ...], CallBasis] = {}
    out = []
    for entry in entries:
        cell = entry.config["cell"]
        basis = measured
        if basis is None and "/" in cell["policy"]:
            key = (
                cell["framing"],
                cell["skin"],
                cell["protocol"],
                cell.get("condition"),
                cell["budget"],
                cell["cost"],
            )
            if key not in framing_bases:
                framing_bases[key] = framing_basis(entry)
            basis = framing_bases[key]
        out.append(entry_estimate(entry, basis, prices))
    source = (
        measured.source
        if measured is not None
        else (next(iter(framing_bases.values())).source if framing_bases else "no model calls")
    )
    return PlanEstimate(out, source)
