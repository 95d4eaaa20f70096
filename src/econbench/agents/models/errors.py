"""The error every model-configuration check raises, apart from the registry that raises most.

It lives on its own so that a provider's loader (the local ``hf/`` models) can raise it
without importing the registry that builds that provider.
"""

from __future__ import annotations


class ModelConfigError(ValueError):
    """A model name or its settings cannot work; raised before a run starts."""
