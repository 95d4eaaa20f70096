"""Who plays each firm: a scripted policy, or a model through the ReAct agent.

A policy name containing a slash is a model (``provider/model``); anything else is a
scripted policy of ``econbench.coffee.policies``. The environment builds scripted policies
itself; the model-driven ones are built here, in the run layer, which owns the providers,
their settings, the concurrency limiter and the wraps (recording, replay, cache).

A policy object handed in from Python (``policies=``) is *custom*: the run records it under
``custom:<qualified name>`` (:func:`custom_name`, :func:`recorded_config`) instead of the name
the config gave that firm, so reports never pool it with the policy it replaced and a resume
knows it cannot rebuild it.

A person (``human:<name>``) plays through a *seat* the caller hands in (``seats=``: the
terminal or the page of ``econbench coffee play``), in the same agent loop a model has
(``econbench.runs.play.coffee_person``).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from econbench.agents.models.human import is_human
from econbench.coffee.config import FIRMS, is_model, role_of
from econbench.coffee.policies import UnknownPolicyError, make_policy
from econbench.coffee.sim import scripted_policy
from econbench.runs.coffee.config import RunConfig
from econbench.runs.resume import custom_name, is_custom

if TYPE_CHECKING:  # the model side is imported only when a model plays
    from econbench.agents.models.base import ModelProvider, ProviderWrap
    from econbench.agents.models.human import Seat
    from econbench.agents.models.retry import ConcurrencyLimiter
    from econbench.agents.policy import Actor
    from econbench.agents.react import LLMAgent


def run_limiter(config: RunConfig) -> ConcurrencyLimiter:
    """One concurrency limiter per run, keyed by provider."""
    from econbench.agents.models.registry import make_limiter

    models = [config.policy_for(f) for f in FIRMS if is_model(config.policy_for(f))]
    return make_limiter(models, dict(config.models))


def model_policy(
    name: str,
    firm_id: str,
    config: RunConfig,
    *,
    limiter: ConcurrencyLimiter,
    wrap: ProviderWrap | None = None,
) -> LLMAgent:
    """The LLM agent that plays ``firm_id`` with model ``name``; ``wrap`` (recording,
    replay, a cache) is applied to its provider. Its conversation opens with the system prompt
    and the day-0 message (``prompts.DAY0_MESSAGE``, the reference's first user message), then
    the first observation. Its events go wherever the run binds them (``CoffeeRun`` logs them
    in the run's event log)."""
    from econbench.agents.models.registry import build_provider
    from econbench.agents.react import CompactionSettings

    settings = config.model_settings(name)
    retries = settings.retry_policy()
    return firm_agent(
        build_provider(name, settings),
        firm_id,
        config,
        wrap=wrap,
        config=settings.generate_config(),
        compaction=CompactionSettings(threshold=settings.compaction_threshold),
        limiter=limiter,
        max_attempts=retries.max_attempts,
        retry_options=retries.options(),
    )


def firm_agent(
    provider: ModelProvider,
    firm_id: str,
    run_config: RunConfig,
    *,
    wrap: ProviderWrap | None,
    **options: Any,
) -> LLMAgent:
    """The LLM agent through which ``provider`` (a model's, or a person's seat:
    ``runs.play.coffee_person``) plays ``firm_id``: ``wrap`` applied to the provider, the
    firm's system prompt, the day-0 message, its observations, and the sent messages named by
    digest in the run's call record; ``options`` are the agent's own (``config``, retries)."""
    from econbench.agents.models.record import RecordingProvider
    from econbench.agents.react import LLMAgent
    from econbench.coffee.prompts import DAY0_MESSAGE, system_prompt
    from econbench.coffee.render import render_observation

    if wrap is not None:
        provider = wrap(provider, firm_id)
    # The run's call record holds every message sent: checkpoints name those by digest.
    store = provider.record if isinstance(provider, RecordingProvider) else None
    prompt_style = run_config.prompts.get(firm_id, "standard")
    return LLMAgent(
        provider,
        system_prompt=system_prompt(firm_id, run_config, prompt_style),
        initial_message=DAY0_MESSAGE,
        render_observation=render_observation,
        seed=zlib.crc32(f"{run_config.seed}:{firm_id}".encode()),
        message_store=store,
        **options,
    )


def firm_policies(
    config: RunConfig,
    given: Mapping[str, Actor] | None = None,
    *,
    wrap: ProviderWrap | None = None,
    seats: Mapping[str, Seat] | None = None,
) -> dict[str, Actor]:
    """Every firm's policy: the ``given`` ones first, then, in canonical firm order, an LLM
    agent for a model name, a person's agent (seated in ``seats``) for ``human:<name>``, or
    the scripted policy (the order ``CoffeeRun`` starts them and checkpoints their state in).
    The limiter is built only when a model plays."""
    models_play = any(is_model(config.policy_for(f)) for f in FIRMS)
    limiter = run_limiter(config) if models_play else None
    policies = dict(given or {})
    for firm_id in FIRMS:
        if firm_id in policies:
            continue
        name = config.policy_for(firm_id)
        if is_model(name):
            assert limiter is not None  # built above: a model plays
            policies[firm_id] = model_policy(name, firm_id, config, limiter=limiter, wrap=wrap)
        elif is_human(name):
            from econbench.runs.play.coffee_person import person_policy

            seat = (seats or {}).get(firm_id)
            if seat is None:
                raise UnknownPolicyError(person_refusal(firm_id, name))
            policies[firm_id] = person_policy(name, firm_id, config, seat, wrap=wrap)
        else:
            policies[firm_id] = scripted_policy(config, firm_id)
    return policies


def recorded_config(config: RunConfig, given: Mapping[str, Any]) -> RunConfig:
    """``config`` as the run records it: each firm in ``given`` played by its custom name."""
    if not given:
        return config
    unknown = sorted(set(given) - set(FIRMS))
    if unknown:
        raise UnknownPolicyError(
            f"policies: unknown firm(s) {', '.join(unknown)} (firms: {', '.join(FIRMS)})"
        )
    agents = dict(config.agents)
    for firm_id in FIRMS:
        if firm_id in given:
            agents[firm_id] = custom_name(given[firm_id])
    return config.model_copy(update={"agents": agents})


def validate_agents(
    config: RunConfig,
    given: Mapping[str, Any] | None = None,
    seats: Mapping[str, Any] | None = None,
) -> None:
    """Fail before anything runs: unknown policies, bad model names, missing API keys, a
    custom player (``custom:…``) that no policy object in ``given`` plays, and a person
    (``human:…``) with no seat in ``seats``."""
    models: list[str] = []
    for firm_id in FIRMS:
        if firm_id in (given or {}):
            continue
        name = config.policy_for(firm_id)
        if is_human(name):
            if firm_id not in (seats or {}):
                raise UnknownPolicyError(person_refusal(firm_id, name))
            continue
        if is_custom(name):
            raise UnknownPolicyError(
                f"{firm_id} = {name!r} names a custom policy, which only Python can supply: "
                "pass the policy object itself (econbench.api.run_coffee(policies=...))"
            )
        if is_model(name):
            from econbench.agents.models.registry import parse_model_name

            parse_model_name(name)
            models.append(name)
        else:
            make_policy(name, role_of(firm_id))
    if models:
        from econbench.agents.models.registry import check_keys

        check_keys(models, {name: config.model_settings(name) for name in models})


def person_refusal(firm_id: str, actor: str) -> str:
    """Why a firm a person plays cannot be played here, and where it can (one line)."""
    return (
        f"{firm_id} = {actor!r} is played by a person, who needs a seat: play it with "
        f"`econbench coffee play --firm {firm_id}`, and continue a stopped game with "
        "`econbench resume RUN_DIR` (add --open for the browser)"
    )
