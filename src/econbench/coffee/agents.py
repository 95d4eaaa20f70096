"""Who plays each firm: a scripted policy, or a model through the ReAct agent.

A policy name containing a slash is a model (``provider/model``); anything else is a
scripted policy of ``econbench.coffee.policies``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

from econbench.agents.models.base import ModelProvider, ProviderWrap
from econbench.agents.models.registry import (
    ModelSettings,
    build_provider,
    check_keys,
    make_limiter,
    parse_model_name,
)
from econbench.agents.models.retry import ConcurrencyLimiter
from econbench.agents.policy import Policy
from econbench.agents.react import CompactionSettings, LLMAgent
from econbench.coffee.config import FIRMS, RunConfig, role_of
from econbench.coffee.policies import make_policy
from econbench.coffee.prompts import system_prompt
from econbench.coffee.render import render_observation

EmitFn = Callable[[str, dict[str, Any]], None]


def model_settings(config: RunConfig, name: str) -> ModelSettings:
    settings = config.models.get(name)
    return settings if settings is not None else ModelSettings()


def is_model(name: str) -> bool:
    """A slash means a model; the registry then validates the provider part."""
    return "/" in name


def run_limiter(config: RunConfig) -> ConcurrencyLimiter:
    """One concurrency limiter per run, keyed by provider."""
    models = [config.policy_for(f) for f in FIRMS if is_model(config.policy_for(f))]
    return make_limiter(models, dict(config.models))


def make_firm_policy(
    name: str,
    firm_id: str,
    config: RunConfig,
    *,
    emit: EmitFn,
    limiter: ConcurrencyLimiter,
    wrap: ProviderWrap | None = None,
) -> Policy:
    """The policy for one firm: an LLM agent for a model name, else a scripted policy.
    ``wrap`` (recording, replay, a cache) is applied to the firm's provider."""
    if not is_model(name):
        return make_policy(name, role_of(firm_id), seed=config.seed, firm_id=firm_id)
    settings = model_settings(config, name)
    provider: ModelProvider = build_provider(name, settings)
    if wrap is not None:
        provider = wrap(provider, firm_id)
    return LLMAgent(
        provider,
        system_prompt=system_prompt(firm_id, config, config.prompts.get(firm_id, "standard")),
        render_observation=render_observation,
        config=settings.generate_config(),
        compaction=CompactionSettings(threshold=settings.compaction_threshold),
        limiter=limiter,
        seed=zlib.crc32(f"{config.seed}:{firm_id}".encode()),
        on_event=emit,
    )


def validate_agents(config: RunConfig) -> None:
    """Fail before anything runs: unknown policies, bad model names, missing API keys."""
    models: list[str] = []
    for firm_id in FIRMS:
        name = config.policy_for(firm_id)
        if is_model(name):
            parse_model_name(name)
            models.append(name)
        else:
            make_policy(name, role_of(firm_id))
    if models:
        check_keys(models, {name: model_settings(config, name) for name in models})
