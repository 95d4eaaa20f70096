"""AlloBench: online tool allocation under a build budget.

Importing the package makes the Gymnasium environments ``AlloBench-R0-v0`` (the evaluation's
R0 text), ``AlloBench-R0-Counting-v0`` (a text that states sighting counts) and
``AlloBench-Features-v0`` (numeric features) available to ``gymnasium.make`` without importing
Gymnasium itself, which costs half a second that the command line and the runner do not need:
if Gymnasium is already imported the ids are registered at once, otherwise as soon as it is
imported (a one-shot import hook). Gymnasium 1.x has no plugin entry points to do this.
The env modules themselves load lazily on ``gymnasium.make``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

GYM_ENV_IDS: dict[str, str] = {
    "AlloBench-R0-v0": "econbench.allo.gym_env:AlloR0Env",
    "AlloBench-R0-Counting-v0": "econbench.allo.gym_env:AlloR0CountingEnv",
    "AlloBench-Features-v0": "econbench.allo.gym_env:AlloFeaturesEnv",
}


def register_envs() -> None:
    """Register the Gymnasium environments (idempotent; imports Gymnasium)."""
    from gymnasium.envs.registration import register, registry

    for env_id, entry_point in GYM_ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry_point)


class _RegisteringLoader(importlib.abc.Loader):
    """Gymnasium's own loader, followed by :func:`register_envs` once the package is loaded."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        register_envs()

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, get_filename, …
        return getattr(self._inner, name)


class _RegisterOnGymnasiumImport(importlib.abc.MetaPathFinder):
    """Finds ``gymnasium`` as usual, once, and wraps its loader to register the envs."""

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        _remove_hook()
        for finder in sys.meta_path:  # the finders that would have found it without us
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterOnGymnasiumImport)]


def _register_when_gymnasium_loads() -> None:
    if "gymnasium" in sys.modules:
        register_envs()
    elif not any(isinstance(f, _RegisterOnGymnasiumImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnGymnasiumImport())


_register_when_gymnasium_loads()
