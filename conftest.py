"""Guards every test in the repository: no network beyond loopback, no real provider key.

The machinery lives in ``tests/fakes/network.py``; this file applies it to every test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.fakes.network import PROVIDER_ENV, NetworkGuard

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def network_guard(monkeypatch: pytest.MonkeyPatch) -> Iterator[NetworkGuard]:
    """Refuse non-loopback connections and clear provider keys for the test's duration.

    A test of the guard itself may empty ``network_guard.blocked`` after provoking it.
    """
    for var in PROVIDER_ENV:
        monkeypatch.delenv(var, raising=False)
    guard = NetworkGuard()
    guard.install(monkeypatch)
    yield guard
    if guard.blocked:
        pytest.fail(
            f"the test tried to reach the network: {', '.join(guard.blocked)}", pytrace=False
        )
