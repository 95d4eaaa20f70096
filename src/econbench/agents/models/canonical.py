"""The canonical JSON spelling of a value and the SHA-256 hex digest of a text.

Shared by ``base.ChatMessage`` (which keeps its own canonical body and digest) and
``record`` (request keys, the record's content-addressed tables, the response cache): one
spelling, so a message hashed where it lives and one hashed by the record always agree.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces, non-ASCII kept (hash input)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    """The SHA-256 hex digest of ``text`` as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
