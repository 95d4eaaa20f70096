"""Who plays a cell: a reference policy, or a model with its condition's request rules.

The game (``econbench.allo``) knows actors only as factories; which provider a model name
reaches, whether its API key is set and which of a condition's request rules its provider
takes are the model layer's knowledge, so the factory for a cell is chosen here.
"""

from __future__ import annotations

from typing import Any

from econbench.agents.models.base import ProviderWrap
from econbench.agents.models.human import is_human
from econbench.agents.models.registry import check_keys
from econbench.agents.models.settings import (
    OPENAI_ONLY_SETTINGS,
    PAPER_STYLE_PROVIDERS,
    ModelSettings,
)
from econbench.allo.episodes.actors import ActorFactory
from econbench.allo.episodes.runner import CellSpec, reference_factory
from econbench.allo.framings import FRAMINGS
from econbench.allo.paper.conditions import Condition, get_condition


def make_factory(
    spec: CellSpec,
    models: dict[str, Any] | None = None,
    wrap: ProviderWrap | None = None,
    seat: Any = None,
) -> ActorFactory:
    """The actor factory for ``spec.policy``: a model (``provider/model``, its API key checked
    now, before anything runs), a person (``human:<name>``, who plays through ``seat``:
    ``econbench allo play``) or a reference policy name."""
    if is_human(spec.policy):
        from econbench.runs.play.allo_actor import HumanActorFactory

        return HumanActorFactory(spec.policy, seat, wrap=wrap)
    if "/" in spec.policy:
        from econbench.runs.allo.llm_actor import LLMActorFactory

        settings = cell_settings(spec, (models or {}).get(spec.policy) or ModelSettings())
        check_keys([spec.policy], {spec.policy: settings})
        return LLMActorFactory(spec.policy, settings, wrap=wrap)
    return reference_factory(spec)


def cell_settings(spec: CellSpec, settings: ModelSettings) -> ModelSettings:
    """``settings`` of the cell's model with its condition's request rules filled in where
    they are unset."""
    condition = get_condition(str(spec.condition))
    return condition_settings(condition, spec.framing, spec.policy, settings)


def condition_settings(
    condition: Condition, rung: str, model: str, settings: ModelSettings
) -> ModelSettings:
    """``settings`` for ``model`` at ``rung`` with ``condition``'s request rules filled in
    where the user left a field unset (a field set explicitly always wins)."""
    with_tools = FRAMINGS[condition.setup(rung).framing].uses_tools
    unset = {
        k: v
        for k, v in condition.model_defaults(rung, model).items()
        if k in ModelSettings.model_fields
        and k not in settings.model_fields_set
        and _applies(k, model, with_tools=with_tools)
    }
    return settings.model_copy(update=unset) if unset else settings


def _applies(setting: str, model: str, *, with_tools: bool) -> bool:
    """Whether a condition's default for ``setting`` reaches ``model``'s provider. Not filled
    in: the paper's request form where the paper's client had none, the OpenAI-only wire
    settings for other providers (they are refused there), and a reasoning effort for a local
    model with tools (the paper's Ollama and vLLM branches send none)."""
    provider = model.split("/", 1)[0]
    if setting == "request_style":
        # The paper's client spoke these SDKs only; another provider (Gemini, a local Hugging
        # Face model) plays the condition's texts and rules in its own request form.
        return provider in PAPER_STYLE_PROVIDERS
    if setting == "reasoning_effort":
        return provider == "openai" or (provider == "openai-compatible" and not with_tools)
    if setting in OPENAI_ONLY_SETTINGS:
        return provider in ("openai", "openai-compatible")
    return True
