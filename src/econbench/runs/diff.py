"""What changed between two JSON documents, as lines a person can read."""

from __future__ import annotations

import json
from typing import Any


def config_diff(old: Any, new: Any, path: str = "") -> list[str]:
    """Readable differences: ``economy.demand_noise_sd: 0.1 → 0.2``, one line per leaf."""
    if isinstance(old, dict) and isinstance(new, dict):
        changes: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in new:
                changes.append(f"{where}: {_short(old[key])} → (removed)")
            elif key not in old:
                changes.append(f"{where}: (absent) → {_short(new[key])}")
            else:
                changes += config_diff(old[key], new[key], where)
        return changes
    if old != new:
        return [f"{path}: {_short(old)} → {_short(new)}"]
    return []


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
