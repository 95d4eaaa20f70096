"""What every HTTP provider does with a failed call: wait time, a clean message, overflow.

The OpenAI, Anthropic and Gemini providers each map their SDK's errors onto the three error
classes of ``base``; the parts of that mapping that are not about one API live here, once,
so the providers cannot drift apart:

- ``retry_after_seconds``: how long a server asks us to wait (``Retry-After-Ms``, then
  ``Retry-After`` as seconds or an HTTP date); ``retry_info_seconds`` reads the same from
  the ``google.rpc.RetryInfo`` detail that Gemini puts in an error body.
- ``redact``: an error message without the API key, neither whole nor as the masked echo a
  server sends back (``sk-proj-****abcd``, ``sk-…abcd``), nor anything else shaped like one.
  A message ends up in logs and event files that people share.
- ``is_context_overflow``: whether an error says the prompt no longer fits the window (the
  union of what OpenAI, the compatible servers, Anthropic and Gemini send), so the agent
  compacts instead of the run stopping.
- ``base_url_problem``: why a base URL cannot work (``http://[::1``, a port past 65535, no
  scheme), checked before a run starts, so that it is one configuration error naming the
  setting instead of an SDK's traceback.
"""

from __future__ import annotations

import email.utils
import math
import os
import re
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from econbench.agents.models.errors import ModelConfigError

REDACTED = "[redacted]"

# --------------------------------------------------------------------------- retry-after
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)s\s*$")


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from ``Retry-After-Ms`` or ``Retry-After`` (seconds or an HTTP date).

    ``headers`` is any mapping with ``get`` (an ``httpx`` header set is case-insensitive;
    a plain dict must use lower-case names). A date in the past is 0; a value that is not
    a finite number or a date is ignored (``None``: no advice, the backoff decides).
    """
    if headers is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except (TypeError, ValueError):
            if header == "retry-after-ms":
                continue
            seconds = _seconds_until(str(value))
            if seconds is None:
                return None
        return max(0.0, seconds) if math.isfinite(seconds) else None
    return None


def _seconds_until(date: str) -> float | None:
    """Seconds from now until an HTTP date (a date without a zone is read as UTC)."""
    parsed = email.utils.parsedate_tz(date)
    if parsed is None:
        return None
    try:
        return email.utils.mktime_tz(parsed) - time.time()
    except (OverflowError, ValueError):
        return None


def retry_info_seconds(details: Any) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` in a Gemini error body (``"retryDelay":
    "12s"``). ``details`` is the decoded body (``{"error": {"details": [...]}}``), its
    ``error`` object, or the ``details`` list itself."""
    if isinstance(details, dict):
        error = details.get("error", details)
        details = error.get("details") if isinstance(error, dict) else None
    for item in details if isinstance(details, list) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("RetryInfo"):
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                seconds = float(match.group(1))
                return seconds if math.isfinite(seconds) else None
    return None


# --------------------------------------------------------------------------- redaction
_KEYLIKE = re.compile(
    r"\b(?:sk|rk|pk|key)-[A-Za-z0-9_\-*.]{6,}"  # OpenAI, Anthropic (sk-ant-), most proxies
    r"|\bAIza[0-9A-Za-z_\-]{30,}"  # Google API keys
)
_MASK = r"(?:\*+|…|\.{3,}|•+)"
"""What servers put in place of the hidden middle of a key they echo back."""


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without the given keys and without anything shaped like a key.

    Each secret of 4 or more characters is removed whole; for one of 12 or more, so are its
    first 8 and last 6 characters and any masked echo ending in its last 4 (``sk-…abcd``,
    ``sk-proj-****abcd``), which a server may include in a 401 message.
    """
    keys = {s for s in secrets if isinstance(s, str) and len(s) >= 4}
    for secret in sorted(keys, key=len, reverse=True):  # a key inside a longer one: last
        text = text.replace(secret, REDACTED)
        if len(secret) >= 12:
            text = text.replace(secret[:8], REDACTED).replace(secret[-6:], REDACTED)
            text = re.sub(r"[\w\-]*" + _MASK + r"\s*" + re.escape(secret[-4:]), REDACTED, text)
    return _KEYLIKE.sub(REDACTED, text)


# --------------------------------------------------------------------------- overflow
OVERFLOW_STATUS = frozenset({400, 413, 422})
"""Statuses an overflow comes with: 400 (everyone), 413 (Anthropic's ``request_too_large``,
Gemini, proxies), 422 (some compatible servers)."""
OVERFLOW_CODES = frozenset(
    {
        "context_length_exceeded",  # OpenAI, OpenRouter, vLLM
        "exceed_context_size_error",  # llama.cpp
        "string_above_max_length",  # OpenAI: one message longer than the API takes
        "prompt_too_long",  # Anthropic-compatible servers
        "request_too_large",  # Anthropic 413
    }
)
_OVERFLOW_TEXT = re.compile(
    r"context[ _-]?length|maximum context|context (?:window|size)|prompt[ _]is[ _]too[ _]long|"
    r"prompt_too_long|too many (?:input )?tokens|longer than the model|input is too long|"
    r"reduce the length|exceeds the maximum number of tokens|input token count|too long",
    re.IGNORECASE,
)


def is_context_overflow(status: int | None, message: str, code: str | None = None) -> bool:
    """Does this error say the prompt does not fit the model's window?

    ``status`` is ``None`` for an error reported inside a 200 body (OpenRouter). An
    overflow code decides alone; a 413 is always one (the request is too large); otherwise
    the status must be one an overflow comes with and the message (or code) must say so.
    """
    if code is not None and code.lower() in OVERFLOW_CODES:
        return True
    if status == 413:
        return True
    if status is not None and status not in OVERFLOW_STATUS:
        return False
    return bool(_OVERFLOW_TEXT.search(f"{message} {code or ''}"))


# --------------------------------------------------------------------------- base URLs
def base_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a provider's base URL (a short phrase), or ``None``.

    Checked with the standard parser and with the one the SDKs use (``httpx2``, imported
    only here: a scripted run never needs it), so whatever passes is what they accept.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not one
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    import httpx2

    try:
        httpx2.URL(url)
    except (httpx2.InvalidURL, ValueError, TypeError) as exc:
        return str(exc)
    return None


def checked_base_url(name: str, url: str | None, source: str) -> str | None:
    """``url`` (from ``source``: a variable's name, or ``base_url``) if it can work, else the
    one-line ``ModelConfigError`` naming ``source`` and what to set; ``None`` passes."""
    if not url:
        return url
    problem = base_url_problem(url)
    if problem is None:
        return url
    shown = redact(url if len(url) <= 80 else url[:80] + "…")
    raise ModelConfigError(
        f"{name}: {source}={shown!r} is not a usable URL ({problem}); set it to an http(s) "
        "URL such as http://127.0.0.1:8000/v1, or unset it"
    )


def check_sdk_base_url(name: str, base_url: str | None, var: str) -> None:
    """Check the base URL an SDK client will use: ``base_url``, else the variable ``var`` it
    reads by itself (a provider built directly, not through the registry)."""
    if base_url:
        checked_base_url(name, base_url, "base_url")
    else:
        checked_base_url(name, os.environ.get(var, "").strip(), var)
