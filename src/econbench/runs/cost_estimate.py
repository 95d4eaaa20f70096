"""What a sweep will cost before it runs: model calls × tokens per call, priced per model.

``econbench sweep EXPERIMENT.toml --dry-run`` prints, for every entry, the model calls it
will make, their tokens and their dollars, and the sweep's total. Calls and tokens come from
one of two bases, each the benchmark's own (``Benchmark.estimate``):

- **the documented basis** (the default). CoffeeBench: the paper's figures for ``roaster_A``,
  scaled by the run's days, for every firm a model plays (:mod:`econbench.runs.coffee.cost`).
  AlloBench: the framing's own texts, measured in one episode where every turn is asked
  (:mod:`econbench.runs.allo.cost`, at :data:`CHARS_PER_TOKEN` characters a token).
- **a measured run** (``--like RUN_DIR``): the calls and tokens a finished run of the same
  benchmark recorded in its ``summary.json`` (CoffeeBench: per model-played firm, per day;
  AlloBench: per episode), including its measured cache-hit share.

Output tokens per call and the cache-hit share are not in the paper: :data:`OUTPUT_TOKENS_PER_CALL`
and :data:`CACHE_HIT_SHARE` are econbench's assumptions, stated here and printed with the
estimate. Each call is priced with ``econbench.agents.models.pricing`` (the versioned price
table) and its cache rates: the cached share of the prompt at the cache-read price, the rest
at the cache-write price (Anthropic: 1.25x input; automatic caches: the input price), the
output at the output price. The ``uncached`` column prices the same tokens with no cache at
all: the bill's ceiling. A price the run's model settings give (``[models."NAME"]``
``input_usd_per_mtok`` …, ``ModelSettings.price``) comes before the table's, as it does when
the run is played. Models without a price count as unknown ("unpriced"), never as free.

``coffee run`` and ``allo run`` estimate their own run the same way before a model plays
(:func:`estimate_entries`, shown by ``econbench.runs.cost_preflight``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from econbench.agents.models.base import Usage
from econbench.agents.models.pricing import (
    DEFAULT_PRICES,
    PRICE_TABLE_VERSION,
    Price,
    PriceTable,
)
from econbench.agents.models.settings import ModelSettings
from econbench.runs.benchmark import get_benchmark
from econbench.runs.experiment import Entry, Plan
from econbench.runs.layout import benchmark_of

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

    @property
    def actors(self) -> list[ActorEstimate]:
        return [a for e in self.entries for a in e.actors]

    @property
    def calls(self) -> float:
        return sum(e.calls for e in self.entries)

    @property
    def input_tokens(self) -> float:
        return sum(e.input_tokens for e in self.entries)

    @property
    def output_tokens(self) -> float:
        return sum(a.output_tokens for a in self.actors)


def actor_estimate(
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


def measured_basis(
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


# --------------------------------------------------------------------------- prices


def configured_prices(models: Mapping[str, Any]) -> dict[str, Price]:
    """The prices model settings give (name -> price): ``models`` maps a model name to its
    ``ModelSettings`` or their plain data, as a config or an entry holds them."""
    prices: dict[str, Price] = {}
    for name, settings in models.items():
        try:
            own = (
                settings
                if isinstance(settings, ModelSettings)
                else ModelSettings.model_validate(settings)
            )
        except ValidationError:
            continue  # the run's own checks report bad settings; here they price nothing
        price = own.price()
        if price is not None:
            prices[name] = price
    return prices


def entry_prices(entries: Iterable[Entry], base: PriceTable = DEFAULT_PRICES) -> PriceTable:
    """``base`` with the prices the entries' model settings give (``config["models"]``, the
    shape both benchmarks' entries share) over it."""
    given: dict[str, Price] = {}
    for entry in entries:
        models = entry.config.get("models")
        if isinstance(models, Mapping):
            given.update(configured_prices(models))
    return base.overlay(given) if given else base


# --------------------------------------------------------------------------- the plan


def estimate_entries(
    benchmark: str,
    entries: list[Entry],
    *,
    like: Path | None = None,
    prices: PriceTable = DEFAULT_PRICES,
) -> PlanEstimate:
    """Every entry's calls, tokens and dollars, each model priced as its run will price it
    (its settings' price first, then ``prices``)."""
    return get_benchmark(benchmark).estimate(entries, like, entry_prices(entries, prices))


def estimate_plan(
    plan: Plan, *, like: Path | None = None, prices: PriceTable = DEFAULT_PRICES
) -> PlanEstimate:
    """Every entry's calls, tokens and dollars (see the module doc for the basis)."""
    if like is not None:
        found = benchmark_of(like)
        if found is None:
            raise EstimateError(f"--like {like} is not a run directory")
        if found != plan.benchmark:
            raise EstimateError(f"--like {like} is a {found} run; this is a {plan.benchmark} sweep")
    return estimate_entries(plan.benchmark, plan.entries, like=like, prices=prices)
