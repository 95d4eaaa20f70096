"""What a model-played actor spent, apart from the ReAct loop that spends it.

The environments report zeros for their scripted firms with this class, so it must import
without the loop's provider, retry and compaction machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from econbench.agents.models.base import ModelOutput, Usage


@dataclass
class AgentStats:
    """What the agent spent: calls, tokens, dollars, compactions and retries."""

    llm_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    compactions: int = 0
    retries: int = 0
    invalid_usage_calls: int = 0
    """Calls whose server reported impossible token counts (counted 0, left unpriced)."""

    def count(self, output: ModelOutput) -> None:
        """One answered call: its tokens, and its cost when the price table knew it."""
        self.llm_calls += 1
        self.usage = self.usage + output.usage
        if output.usage.invalid:
            self.invalid_usage_calls += 1
        if output.cost_usd is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += output.cost_usd

    def state(self) -> dict[str, Any]:
        """Everything, as plain JSON data, for an agent's checkpoint (:meth:`from_state`)."""
        return {
            "llm_calls": self.llm_calls,
            "usage": self.usage.to_dict(),
            "cost_usd": self.cost_usd,
            "unpriced_calls": self.unpriced_calls,
            "compactions": self.compactions,
            "retries": self.retries,
            "invalid_usage_calls": self.invalid_usage_calls,
        }

    @classmethod
    def from_state(cls, stats: dict[str, Any]) -> AgentStats:
        """What :meth:`state` saved (``invalid_usage_calls`` 0 in checkpoints from before it)."""
        return cls(
            llm_calls=int(stats["llm_calls"]),
            usage=Usage(**stats["usage"]),
            cost_usd=float(stats["cost_usd"]),
            unpriced_calls=int(stats["unpriced_calls"]),
            compactions=int(stats["compactions"]),
            retries=int(stats["retries"]),
            invalid_usage_calls=int(stats.get("invalid_usage_calls", 0)),
        )

    def to_dict(self) -> dict[str, Any]:
        """The summary's figures (``invalid_usage_calls`` only when there were any, so the
        summaries of sound runs are unchanged)."""
        data: dict[str, Any] = {
            "llm_calls": self.llm_calls,
            "input_tokens": self.usage.input_tokens,
            "cached_input_tokens": self.usage.cached_input_tokens,
            "cache_write_tokens": self.usage.cache_write_tokens,
            "output_tokens": self.usage.output_tokens,
            "reasoning_tokens": self.usage.reasoning_tokens,
            "cost_usd": round(self.cost_usd, 6) if self.unpriced_calls == 0 else None,
            "cost_usd_priced_part": round(self.cost_usd, 6),
            "compactions": self.compactions,
            "retries": self.retries,
        }
        if self.invalid_usage_calls:
            data["invalid_usage_calls"] = self.invalid_usage_calls
        return data


def reply_usage(output: ModelOutput) -> dict[str, Any]:
    """A reply's usage as an actor's ``Reply`` carries it: token counts, the cost when priced,
    and a flag when the response cache served it (no tokens were paid)."""
    usage: dict[str, Any] = {
        "input_tokens": output.usage.input_tokens,
        "cached_input_tokens": output.usage.cached_input_tokens,
        "cache_write_tokens": output.usage.cache_write_tokens,
        "output_tokens": output.usage.output_tokens,
        "reasoning_tokens": output.usage.reasoning_tokens,
    }
    if output.cost_usd is not None:
        usage["cost_usd"] = output.cost_usd
    if output.cache_hit:
        usage["cache_hit"] = True
    return usage
