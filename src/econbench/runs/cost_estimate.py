"""What a sweep will cost before it runs: model calls × tokens per call, priced per model.

``econbench sweep EXPERIMENT.toml --dry-run`` prints, for every entry, the model calls it
will make, their tokens and their dollars, and the sweep's total. Calls and tokens come from
one of two bases:

- **the documented basis** (the default). CoffeeBench: the paper's figures for ``roaster_A``
  (the issue quoting it: about :data:`COFFEE_CALLS_PER_RUN` model calls in a 90-day run, and
  about :data:`COFFEE_INPUT_TOKENS_PER_CALL` input tokens per call — the context a firm's
  conversation has grown to on average, compaction included), scaled by the run's days and
  applied to every firm a model plays (the paper reports roaster_A only; the background
  firms are assumed to call as often with prompts as long). AlloBench: the framing's own
  texts — one episode of the cell's framing is played with the ``never`` reference policy
  (it never builds, so every turn is asked: an upper bound on a model's calls) and its
  system prompt, tool schemas and per-turn observations are measured (at
  :data:`CHARS_PER_TOKEN` characters a token); each asked turn is one model call whose
  prompt is everything before it (the conversation grows through the episode).
- **a measured run** (``--like RUN_DIR``): the calls and tokens a finished run of the same
  benchmark recorded in its ``summary.json`` (CoffeeBench: per model-played firm, per day;
  AlloBench: per episode), including its measured cache-hit share.

Output tokens per call and the cache-hit share are not in the paper: :data:`OUTPUT_TOKENS_PER_CALL`
and :data:`CACHE_HIT_SHARE` are econbench's assumptions, stated here and printed with the
estimate. Each call is priced with ``econbench.agents.models.pricing`` (the versioned price
table) and its cache rates: the cached share of the prompt at the cache-read price, the rest
at the cache-write price (Anthropic: 1.25x input; automatic caches: the input price), the
output at the output price. The ``uncached`` column prices the same tokens with no cache at
all: the bill's ceiling. Models without a price count as unknown, never as free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from econbench.agents.models.base import Usage
from econbench.agents.models.pricing import DEFAULT_PRICES, PRICE_TABLE_VERSION, PriceTable
from econbench.runs.experiment import Entry, Plan
from econbench.runs.layout import SUMMARY, read_json

COFFEE_PAPER_DAYS = 90
COFFEE_CALLS_PER_RUN = 1_000
"""Model calls of roaster_A in one 90-day CoffeeBench run (the paper: ~1,000)."""
COFFEE_INPUT_TOKENS_PER_CALL = 90_000
"""Input (prompt) tokens per roaster_A call, on average over the run (the paper: ~90k)."""
OUTPUT_TOKENS_PER_CALL = 500
"""Output tokens per call, reasoning included (econbench's assumption: a tool call and a few
sentences; the paper gives no figure). A reasoning model at high effort may write more."""
CACHE_HIT_SHARE = 0.8
"""Share of each prompt read from the provider's prompt cache (econbench's assumption):
consecutive calls of one conversation share all but the newest messages, the harness puts
Anthropic's cache breakpoints on the system prompt and the last message, and OpenAI, Gemini
and the OpenAI-compatible APIs cache prefixes by themselves; compactions and cache expiry
lose some of it. The ``uncached`` column shows the bill without any cache."""
CHARS_PER_TOKEN = 4.0
"""Characters per token for measuring prompt texts (the usual rule of thumb for English)."""
ALLO_OUTPUT_TOKENS_PER_CALL = 200
"""AlloBench output tokens per call (econbench's assumption: one decision tool call and a
short reason)."""


PROBE_POLICY = "never"
"""The reference policy whose episode measures a framing: it is asked every turn."""


class EstimateError(ValueError):
    """The basis cannot be built (``--like`` names no usable run)."""


@dataclass(frozen=True)
class CallBasis:
    """Calls and tokens of one model-played actor: per unit (a CoffeeBench day, an AlloBench
    episode), so a run of another length scales."""

    calls_per_unit: float
    input_tokens_per_call: float
    output_tokens_per_call: float
    cache_hit_share: float
    source: str

    def usage(self, *, cached: bool = True) -> Usage:
        """One average call's usage (``cached=False``: no prompt cache)."""
        prompt = round(self.input_tokens_per_call)
        hit = round(prompt * self.cache_hit_share) if cached else 0
        return Usage(
            input_tokens=prompt,
            output_tokens=round(self.output_tokens_per_call),
            cached_input_tokens=hit,
            cache_write_tokens=prompt - hit if cached else 0,
        )


@dataclass
class ActorEstimate:
    """One model-played firm (CoffeeBench) or a cell's model (AlloBench) in one entry."""

    actor: str
    model: str
    calls: float
    input_tokens: float
    output_tokens: float
    cost_usd: float | None
    uncached_usd: float | None


@dataclass
class EntryEstimate:
    id: str
    actors: list[ActorEstimate] = field(default_factory=list)

    @property
    def calls(self) -> float:
        return sum(a.calls for a in self.actors)

    @property
    def input_tokens(self) -> float:
        return sum(a.input_tokens for a in self.actors)

    @property
    def unpriced(self) -> list[str]:
        return sorted({a.model for a in self.actors if a.cost_usd is None})

    @property
    def cost_usd(self) -> float:
        """Dollars of the priced actors (see ``unpriced`` for the others)."""
        return sum(a.cost_usd or 0.0 for a in self.actors)

    @property
    def uncached_usd(self) -> float:
        return sum(a.uncached_usd or 0.0 for a in self.actors)


@dataclass
class PlanEstimate:
    entries: list[EntryEstimate]
    basis: str
    """One line saying where calls and tokens come from."""
    price_table: str = PRICE_TABLE_VERSION

    @property
    def cost_usd(self) -> float:
        return sum(e.cost_usd for e in self.entries)

    @property
    def uncached_usd(self) -> float:
        return sum(e.uncached_usd for e in self.entries)

    @property
    def unpriced(self) -> list[str]:
        return sorted({m for e in self.entries for m in e.unpriced})


def _actor(
    actor: str, model: str, basis: CallBasis, units: float, prices: PriceTable
) -> ActorEstimate:
    calls = basis.calls_per_unit * units
    per_call = prices.cost(model, basis.usage())
    ceiling = prices.cost(model, basis.usage(cached=False))
    return ActorEstimate(
        actor=actor,
        model=model,
        calls=calls,
        input_tokens=calls * basis.input_tokens_per_call,
        output_tokens=calls * basis.output_tokens_per_call,
        cost_usd=None if per_call is None else per_call * calls,
        uncached_usd=None if ceiling is None else ceiling * calls,
    )


# --------------------------------------------------------------------------- CoffeeBench


def coffee_paper_basis() -> CallBasis:
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


def _measured(
    calls: float, inputs: float, cached: float, outputs: float, units: float, unit: str, source: str
) -> CallBasis:
    """Per-``unit`` calls and per-call tokens of a recorded run."""
    if calls <= 0 or units <= 0:
        raise EstimateError(f"--like {source} made no model calls to measure")
    share = min(1.0, max(0.0, cached / inputs)) if inputs > 0 else 0.0
    return CallBasis(
        calls_per_unit=calls / units,
        input_tokens_per_call=inputs / calls,
        output_tokens_per_call=outputs / calls,
        cache_hit_share=share,
        source=(
            f"measured in {source}: {calls / units:,.1f} calls per {unit}, "
            f"{inputs / calls:,.0f} input and {outputs / calls:,.0f} output tokens per call, "
            f"{share:.0%} cache hits"
        ),
    )


def coffee_like_basis(run_dir: Path) -> CallBasis:
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
    return _measured(
        total["llm_calls"] / n,
        total["input_tokens"] / n,
        total["cached_input_tokens"] / n,
        total["output_tokens"] / n,
        days,
        "day and model-played firm",
        str(run_dir),
    )


def coffee_estimate(entry: Entry, basis: CallBasis, prices: PriceTable) -> EntryEstimate:
    from econbench.coffee.config import FIRMS, is_model
    from econbench.runs.coffee.config import RunConfig

    config = RunConfig.model_validate(entry.config)
    out = EntryEstimate(entry.id)
    for firm in FIRMS:
        name = config.policy_for(firm)
        if is_model(name):
            out.actors.append(_actor(firm, name, basis, float(config.days), prices))
    return out


# --------------------------------------------------------------------------- AlloBench


def allo_framing_basis(entry: Entry) -> CallBasis:
    """Calls and prompt sizes per episode of the entry's framing, from its own texts."""
    from econbench.allo.actors import PolicyActorFactory
    from econbench.allo.runner import play_episode
    from econbench.allo.stream import generate_stream
    from econbench.runs.allo.experiment import cell_of

    spec, _ = cell_of(entry)
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


def allo_like_basis(run_dir: Path) -> CallBasis:
    """Per episode, from an AlloBench cell's ``summary.json``."""
    summary = read_json(run_dir / SUMMARY)
    if not isinstance(summary, dict) or "episodes" not in summary:
        raise EstimateError(f"--like {run_dir}: not a finished AlloBench cell (no {SUMMARY})")
    return _measured(
        float(summary.get("llm_calls") or 0),
        float(summary.get("input_tokens") or 0),
        float(summary.get("cached_input_tokens") or 0),
        float(summary.get("output_tokens") or 0),
        float(summary.get("episodes") or 0),
        "episode",
        str(run_dir),
    )


def allo_estimate(entry: Entry, basis: CallBasis | None, prices: PriceTable) -> EntryEstimate:
    spec_policy = entry.config["cell"]["policy"]
    out = EntryEstimate(entry.id)
    if "/" not in spec_policy:  # a reference policy makes no model calls
        return out
    basis = basis or allo_framing_basis(entry)
    episodes = float(len(entry.config["cell"]["seeds"]))
    out.actors.append(_actor("cell", spec_policy, basis, episodes, prices))
    return out


# --------------------------------------------------------------------------- the plan


def estimate_plan(
    plan: Plan, *, like: Path | None = None, prices: PriceTable = DEFAULT_PRICES
) -> PlanEstimate:
    """Every entry's calls, tokens and dollars (see the module doc for the basis)."""
    from econbench.runs.layout import benchmark_of

    if like is not None:
        found = benchmark_of(like)
        if found is None:
            raise EstimateError(f"--like {like} is not a run directory")
        if found != plan.benchmark:
            raise EstimateError(f"--like {like} is a {found} run; this is a {plan.benchmark} sweep")
    if plan.benchmark == "coffee":
        basis = coffee_like_basis(like) if like is not None else coffee_paper_basis()
        entries = [coffee_estimate(e, basis, prices) for e in plan.entries]
        return PlanEstimate(entries, basis.source)
    allo_basis = allo_like_basis(like) if like is not None else None
    framing_bases: dict[tuple[Any, ...], CallBasis] = {}
    entries = []
    for entry in plan.entries:
        cell = entry.config["cell"]
        basis = allo_basis
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
                framing_bases[key] = allo_framing_basis(entry)
            basis = framing_bases[key]
        entries.append(allo_estimate(entry, basis, prices))
    source = (
        allo_basis.source
        if allo_basis is not None
        else (next(iter(framing_bases.values())).source if framing_bases else "no model calls")
    )
    return PlanEstimate(entries, source)
