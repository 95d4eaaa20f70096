"""Suite-wide isolation: nothing the suite runs writes to the user's cache directories."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_yardstick_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``coffee run`` prints roaster_A's yardstick, measured once and cached: the suite's
    cache lives in a temporary directory (shared by the tests of a worker), not ~/.cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ECONBENCH_YARDSTICK_CACHE", str(tmp_path_factory.mktemp("yardstick")))
        yield
