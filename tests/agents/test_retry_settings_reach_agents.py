"""``max_retries`` and ``max_backoff_s`` in a model's settings reach the agent that calls it,
in both benchmarks (settings that validate but never apply would be worse than none)."""

from __future__ import annotations

from econbench.agents.models.registry import ModelSettings, register_scripted
from econbench.agents.models.retry import ConcurrencyLimiter
from econbench.allo.episodes.actors import EpisodeInfo
from econbench.allo.framings import get_framing
from econbench.allo.game.stream import generate_stream
from econbench.runs.allo.llm_actor import LLMActorFactory
from econbench.runs.coffee.agents import model_policy
from econbench.runs.coffee.config import RunConfig

MODEL = register_scripted("retry-settings", lambda messages, tools: "ok")


def test_a_coffee_model_agent_gets_its_models_retry_settings() -> None:
    config = RunConfig(
        agents={"roaster_A": MODEL},
        models={MODEL: ModelSettings(max_retries=2, max_backoff_s=3.5)},
    )
    agent = model_policy(MODEL, "roaster_A", config, limiter=ConcurrencyLimiter())
    assert agent.max_attempts == 3
    assert agent.retry_options == {"max_delay": 3.5}
    default = model_policy(MODEL, "roaster_A", RunConfig(), limiter=ConcurrencyLimiter())
    assert default.max_attempts == 6
    assert default.retry_options == {"max_delay": 60.0}


def test_an_allobench_model_actor_gets_its_models_retry_settings() -> None:
    factory = LLMActorFactory(MODEL, ModelSettings(max_retries=0, max_backoff_s=1.0))
    try:
        stream = generate_stream(2000)
        framing = get_framing("r1")
        actor = factory(EpisodeInfo(stream.seed, framing, 0.0, 3, stream))
        assert actor.agent.max_attempts == 1
        assert actor.agent.retry_options == {"max_delay": 1.0}
    finally:
        factory.close()
