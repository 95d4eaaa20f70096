"""Chromium for the browser tests (the viewer, the play pages), through Playwright.

One place for finding the browser, skipping where it is missing (failing in CI, which must
provide it: see ``.ci/run``), and a page whose script errors fail the test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - playwright is a dev dependency
    sync_playwright = None

WAIT_MS = 60_000
"""How long a wait for the page may take before it counts as never: a page that never shows
the text still fails, and a CI machine loaded by the other worker (15 s was once too short)
does not. Not a timing of the page."""


def chromium_path() -> str | None:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def launched_browser(needed_by: str) -> Iterator[Any]:
    """A headless Chromium for a module's ``browser`` fixture (``yield from`` it); skipped,
    saying it is ``needed_by`` whom, where Chromium or Playwright is missing."""
    path = chromium_path()
    if path is None or sync_playwright is None:
        reason = (
            "Chromium (/usr/bin/chromium, Debian's package) is not installed"
            if path is None
            else "playwright is not installed"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must provide it (see .ci/run)")
        pytest.skip(f"{reason}: {needed_by} need it")
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=path, args=["--no-sandbox"], headless=True)
        yield launched
        launched.close()


def checked_page(browser: Any, width: int) -> Iterator[Any]:
    """A page ``width`` pixels wide for a ``page`` fixture (``yield from`` it): clicks and
    navigations wait as long as ``expect`` does, and a script error on it fails the test."""
    context = browser.new_context(viewport={"width": width, "height": 1000})
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], f"the page raised: {errors}"
