"""Fixtures shared by the sandbox tests."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def work() -> Iterator[Path]:
    """A short, world-writable directory (Unix socket paths are limited to 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="eb-attack-", dir="/tmp"))
    path.chmod(0o777)
    yield path
    subprocess.run(["chattr", "-R", "-i", str(path)], capture_output=True, check=False)
    shutil.rmtree(path, ignore_errors=True)
