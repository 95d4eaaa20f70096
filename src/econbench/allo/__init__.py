"""AlloBench: online tool allocation under a build budget.

Importing the package registers the Gymnasium environments ``AlloBench-R0-v0`` (the
evaluation's R0 text), ``AlloBench-R0-Counting-v0`` (a text that states sighting counts) and
``AlloBench-Features-v0`` (numeric features) with ``gymnasium.register``. Each is registered by
its ``entry_point`` string, so the env module itself loads only on ``gymnasium.make``.
"""

from __future__ import annotations

GYM_ENV_IDS: dict[str, str] = {
    "AlloBench-R0-v0": "econbench.allo.gym.envs:AlloR0Env",
    "AlloBench-R0-Counting-v0": "econbench.allo.gym.envs:AlloR0CountingEnv",
    "AlloBench-Features-v0": "econbench.allo.gym.envs:AlloFeaturesEnv",
}


def register_envs() -> None:
    """Register the Gymnasium environments (idempotent)."""
    from gymnasium.envs.registration import register, registry

    for env_id, entry_point in GYM_ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry_point)


register_envs()
