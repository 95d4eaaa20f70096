"""A versioned price table: USD per million tokens, and the cost of one call's ``Usage``.

Published numbers are only comparable when everyone prices tokens the same way, so the table
is versioned (``PRICE_TABLE_VERSION`` goes into every run's summary) and every entry says
where its numbers come from: ``"list"`` is the provider's published list price, ``"estimate"``
an unconfirmed price taken from the closest published family price (the entry's ``note``
says what was assumed), ``"config"`` a price a user registered.

Billing rules, one call at a time:

- ``Usage.input_tokens`` counts every prompt token, so the uncached part is
  ``input - cached_input - cache_write`` and is billed at the input price;
- cache reads are billed at ``cached_input``; cache writes at ``cache_write`` (Anthropic:
  1.25x input for the 5-minute cache; providers with automatic caching charge no write
  premium, so their ``cache_write`` equals ``input``);
- ``Usage.output_tokens`` includes reasoning tokens (every API reports them that way), and
  all of it is billed at the output price; ``reasoning_tokens`` is a breakdown, not an extra;
- a model with a long-context tier (Gemini above 200k prompt tokens, GPT-5.5 above 272k)
  bills the whole call at the long rates once the prompt crosses the threshold.

An unknown model costs ``None``, never an exception: the run goes on and the summary says the
total is incomplete.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from econbench.agents.models.base import Usage
from econbench.agents.models.price_version import PRICE_TABLE_VERSION  # bumped there

PriceSource = Literal["list", "estimate", "config"]

_MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens; reasoning tokens are billed as output.

    ``long_context_above``/``long_context`` describe a second tier: a call whose prompt
    (``Usage.input_tokens``) exceeds the threshold is billed entirely at the long prices.
    """

    input: float
    cached_input: float
    cache_write: float
    output: float
    source: PriceSource = "config"
    note: str = ""
    long_context_above: int | None = None
    long_context: Price | None = None

    def __post_init__(self) -> None:
        for name in ("input", "cached_input", "cache_write", "output"):
            value = getattr(self, name)
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(
                    f"price {name} must be a finite, non-negative number, got {value!r}"
                )
        if (self.long_context_above is None) != (self.long_context is None):
            raise ValueError("long_context_above and long_context go together")

    def tier(self, usage: Usage) -> Price:
        """The prices that apply to this call (the long tier past its threshold)."""
        if (
            self.long_context is not None
            and self.long_context_above is not None
            and usage.input_tokens > self.long_context_above
        ):
            return self.long_context
        return self

    def cost(self, usage: Usage) -> float:
        """USD for one call's usage."""
        p = self.tier(usage)
        cached = max(0, usage.cached_input_tokens)
        written = max(0, usage.cache_write_tokens)
        uncached = max(0, usage.input_tokens - cached - written)
        output = max(0, usage.output_tokens)
        return (
            uncached * p.input
            + cached * p.cached_input
            + written * p.cache_write
            + output * p.output
        ) / _MILLION

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "input": self.input,
            "cached_input": self.cached_input,
            "cache_write": self.cache_write,
            "output": self.output,
            "source": self.source,
        }
        if self.note:
            data["note"] = self.note
        if self.long_context is not None:
            data["long_context_above"] = self.long_context_above
            data["long_context"] = {
                k: v
                for k, v in self.long_context.to_dict().items()
                if k in ("input", "cached_input", "cache_write", "output")
            }
        return data


def anthropic_price(
    input: float, output: float, *, source: PriceSource = "list", note: str = ""
) -> Price:
    """Anthropic's scheme: 5-minute cache writes at 1.25x input, cache reads at 0.1x."""
    return Price(
        input=input,
        cached_input=round(input * 0.1, 6),
        cache_write=round(input * 1.25, 6),
        output=output,
        source=source,
        note=note,
    )


def auto_cache_price(
    input: float,
    cached_input: float,
    output: float,
    *,
    source: PriceSource = "list",
    note: str = "",
    long_context_above: int | None = None,
    long_context: tuple[float, float, float] | None = None,
) -> Price:
    """Automatic (implicit) prompt caching: reads discounted, writes cost plain input."""
    long = None
    if long_context is not None:
        l_in, l_cached, l_out = long_context
        long = Price(l_in, l_cached, l_in, l_out, source=source)
    return Price(
        input=input,
        cached_input=cached_input,
        cache_write=input,
        output=output,
        source=source,
        note=note,
        long_context_above=long_context_above,
        long_context=long,
    )


_ANTHROPIC_PAGE = "platform.claude.com/docs/en/about-claude/pricing"
_SONNET_LONG = (
    "Long-context tier (prompts over 200k, 1M-context beta only) not modelled: the harness "
    "runs Claude with its 200k window."
)

#: model (bare, as the provider's API names it) -> price. Versioned by PRICE_TABLE_VERSION.
PRICE_TABLE: dict[str, Price] = {
    # --- Anthropic: cache writes 1.25x input (5-minute TTL), cache hits 0.1x input.
    "claude-opus-4-7": anthropic_price(5.0, 25.0, note=_ANTHROPIC_PAGE),
    "claude-opus-4-6": anthropic_price(5.0, 25.0, note=_ANTHROPIC_PAGE),
    "claude-opus-4-5": anthropic_price(5.0, 25.0, note=_ANTHROPIC_PAGE),
    "claude-opus-4-1": anthropic_price(15.0, 75.0, note=_ANTHROPIC_PAGE),
    "claude-sonnet-4-6": anthropic_price(3.0, 15.0, note=f"{_ANTHROPIC_PAGE}. {_SONNET_LONG}"),
    "claude-sonnet-4-5": anthropic_price(3.0, 15.0, note=f"{_ANTHROPIC_PAGE}. {_SONNET_LONG}"),
    "claude-sonnet-4": anthropic_price(3.0, 15.0, note=f"{_ANTHROPIC_PAGE}. {_SONNET_LONG}"),
    "claude-haiku-4-5": anthropic_price(1.0, 5.0, note=_ANTHROPIC_PAGE),
    # --- OpenAI: automatic caching, cached input per OpenAI's table, no write premium.
    "gpt-5.5": auto_cache_price(
        5.0,
        0.5,
        30.0,
        long_context_above=272_000,
        long_context=(10.0, 1.0, 45.0),
        note=(
            "OpenAI list price (developers.openai.com/api/docs/pricing) as quoted by several "
            "independent reports, Nov 2026; prompts over 272k input tokens bill the whole call "
            "at 2x input / 1.5x output."
        ),
    ),
    "gpt-5": auto_cache_price(1.25, 0.125, 10.0, note="OpenAI list price"),
    "gpt-5.1": auto_cache_price(1.25, 0.125, 10.0, note="OpenAI list price"),
    "gpt-5-mini": auto_cache_price(0.25, 0.025, 2.0, note="OpenAI list price"),
    "gpt-5-nano": auto_cache_price(0.05, 0.005, 0.40, note="OpenAI list price"),
    # --- Google: implicit caching; prompts over 200k tokens bill at the long-context tier.
    "gemini-3.1-pro": auto_cache_price(
        2.0,
        0.20,
        12.0,
        source="estimate",
        long_context_above=200_000,
        long_context=(4.0, 0.40, 18.0),
        note=(
            "Input/output are the list prices of Gemini 3.1 Pro Preview "
            "(ai.google.dev/gemini-api/docs/pricing: $2/$12, $4/$18 over 200k). The cached "
            "rate ($0.20/$0.40, 10% of input) is the Gemini 3 Pro family's and is not "
            "confirmed for 3.1, hence 'estimate'. Context-cache storage is not billed here."
        ),
    ),
    "gemini-2.5-pro": auto_cache_price(
        1.25,
        0.125,
        10.0,
        long_context_above=200_000,
        long_context=(2.50, 0.25, 15.0),
        note="Google list price (ai.google.dev/gemini-api/docs/pricing)",
    ),
    "gemini-2.5-flash": auto_cache_price(
        0.30, 0.03, 2.50, note="Google list price, text/image/video input"
    ),
    # --- Open-weight models at their makers' own APIs (also served by vLLM and others,
    # where the real cost is your hardware: override with register_price).
    "kimi-k2.6": auto_cache_price(
        0.95,
        0.16,
        4.00,
        note=(
            "Moonshot list price as published by Cloudflare Workers AI and other resellers "
            "($0.95 input, $0.16 cache hit, $4.00 output)"
        ),
    ),
    "glm-5.1": auto_cache_price(
        1.40,
        0.26,
        4.40,
        note=(
            "Z.ai list price as published by OpenRouter and other resellers "
            "($1.40 input, $0.26 cached, $4.40 output)"
        ),
    ),
}

#: Suffixes that name a snapshot or channel of a model, not a different model.
_VARIANT_SUFFIXES = (
    re.compile(r"[-@]\d{8}$"),  # claude-sonnet-4-6-20260101, claude-...@20260101
    re.compile(r"-\d{4}-\d{2}-\d{2}$"),  # gpt-5-2025-08-07
    re.compile(r"-(?:preview|exp)(?:-\d{2}-\d{2,4})?$"),  # gemini-3.1-pro-preview, -preview-05-20
    re.compile(r"-\d{2}-\d{4}$"),  # gemini-2.5-flash-09-2025
    re.compile(r"-(?:latest|\d{3,4})$"),  # claude-opus-4-7-latest, gemini-1.5-pro-002
)


def _canonical(model: str) -> str:
    """Case, dots and underscores do not distinguish models (``glm-5-1`` is ``glm-5.1``)."""
    return model.strip().lower().replace(".", "-").replace("_", "-")


def _candidates(model: str) -> list[str]:
    """``provider/x/model-20260101`` -> the names to try, most specific first."""
    names: list[str] = []
    parts = model.strip().split("/")
    for start in range(len(parts)):
        name = "/".join(parts[start:])
        if not name:
            continue
        names.append(name)
        stripped = name
        changed = True
        while changed:
            changed = False
            for suffix in _VARIANT_SUFFIXES:
                shorter = suffix.sub("", stripped)
                if shorter != stripped and shorter:
                    stripped = shorter
                    names.append(stripped)
                    changed = True
    return names


class PriceTable:
    """The built-in table plus prices registered from config, which take precedence."""

    def __init__(self, base: dict[str, Price] | None = None, version: str = PRICE_TABLE_VERSION):
        self.version = version
        self._base = {_canonical(k): v for k, v in (base or {}).items()}
        self._overrides: dict[str, Price] = {}

    def register(self, model: str, price: Price) -> None:
        """Add or override a price (``provider/model`` or bare model name)."""
        if not isinstance(price, Price):
            raise TypeError("register_price needs a Price")
        key = model.strip()
        if not key:
            raise ValueError("register_price needs a model name")
        self._overrides[_canonical(key)] = price

    def overlay(self, prices: Mapping[str, Price]) -> PriceTable:
        """A new table: this one's prices with ``prices`` (model name -> price) over them,
        e.g. the prices a run's model settings give; this table is not changed."""
        table = PriceTable(version=self.version)
        table._base = dict(self._base)
        table._overrides = dict(self._overrides)
        for model, price in prices.items():
            table.register(model, price)
        return table

    def clear_overrides(self) -> None:
        self._overrides.clear()

    def get(self, model: str) -> Price | None:
        """The price of ``model``: exact name, then without provider and snapshot suffixes."""
        if not isinstance(model, str) or not model.strip():
            return None
        for name in _candidates(model):
            key = _canonical(name)
            if key in self._overrides:
                return self._overrides[key]
            if key in self._base:
                return self._base[key]
        return None

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.get(model)
        if price is None:
            return None
        try:
            cost = price.cost(usage)
        except (TypeError, AttributeError, OverflowError):
            return None  # a malformed usage must not crash a run; the call stays unpriced
        return cost if math.isfinite(cost) else None

    def to_dict(self) -> dict[str, Any]:
        """The effective table (built-in and registered), for a run's record."""
        table = {k: v.to_dict() for k, v in self._base.items()}
        table.update({k: v.to_dict() for k, v in self._overrides.items()})
        return {"version": self.version, "prices": table}


DEFAULT_PRICES = PriceTable(PRICE_TABLE)


def price_for(model: str) -> Price | None:
    """The price ``cost_usd`` would use for ``model``, or ``None`` if it is unknown."""
    return DEFAULT_PRICES.get(model)


def cost_usd(model: str, usage: Usage) -> float | None:
    """USD for one call of ``model`` (``provider/model``, bare or dated); unknown -> None."""
    return DEFAULT_PRICES.cost(model, usage)


def register_price(model: str, price: Price) -> None:
    """Add or override a model's price (e.g. from an experiment config)."""
    DEFAULT_PRICES.register(model, price)


def clear_registered_prices() -> None:
    """Forget every registered price (tests, or a fresh run in the same process)."""
    DEFAULT_PRICES.clear_overrides()


def price_from_dict(data: dict[str, Any]) -> Price:
    """A ``Price`` from config: ``input``, ``output``, optional ``cached_input``/``cache_write``.

    Missing cache prices default to no discount and no premium (``input``), which never
    under-reports a cost.
    """
    allowed = {"input", "output", "cached_input", "cache_write", "note", "long_context_above"}
    allowed |= {"long_context"}
    unknown = set(data) - allowed
    if unknown:
        raise ValueError(f"unknown price field(s): {', '.join(sorted(unknown))}")
    if "input" not in data or "output" not in data:
        raise ValueError("a price needs at least 'input' and 'output' (USD per million tokens)")
    base = Price(
        input=float(data["input"]),
        cached_input=float(data.get("cached_input", data["input"])),
        cache_write=float(data.get("cache_write", data["input"])),
        output=float(data["output"]),
        source="config",
        note=str(data.get("note", "")),
    )
    if "long_context" in data or "long_context_above" in data:
        if "long_context" not in data or "long_context_above" not in data:
            raise ValueError("long_context and long_context_above go together")
        long = price_from_dict(dict(data["long_context"]))
        base = replace(base, long_context_above=int(data["long_context_above"]), long_context=long)
    return base
