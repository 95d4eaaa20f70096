"""One colour per CoffeeBench firm, the same in the report's figures and the viewer's page.

The colours are the viewer's (``runs/viewer/static/app.js``: ``FIRM_COLORS`` and
``SPARE_COLORS``), so a reader who moves between ``index.html`` and ``econbench view`` sees
``roaster_A`` in the same orange. A firm outside the six gets a spare colour chosen by the
same string hash as the viewer's ``firmColor``, so an unknown firm too has one colour in both.
:func:`palette_json` is the map as the viewer's server can serve it.

Configurations (Figure 3's lines) take :data:`CONFIG_COLORS` in order; they never use a firm's
colour, so a configuration line is never mistaken for a firm.
"""

from __future__ import annotations

import json

FIRM_COLORS: dict[str, str] = {
    "farmer_A": "#1b9e77",
    "farmer_B": "#66a61e",
    "roaster_A": "#d95f02",
    "roaster_B": "#c9a100",
    "retailer_A": "#7570b3",
    "retailer_B": "#e7298a",
}
SPARE_COLORS: tuple[str, ...] = ("#1f78b4", "#6a3d9a", "#b15928", "#33a02c", "#fb9a99", "#a6cee3")
CONFIG_COLORS: tuple[str, ...] = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)
"""Figure 3's configurations, in order (matplotlib's tab10 without the firms' near-colours)."""
FESTIVAL_COLOR = "#f2c14e"
"""The shade of the festival days in the figures."""


def _viewer_hash(name: str) -> int:
    """The viewer's ``firmColor`` hash: per character (code point), ``h = (h * 31 + u) mod
    2**32`` with ``u`` its first UTF-16 code unit (JavaScript's ``ch.charCodeAt(0)``)."""
    h = 0
    for ch in name:
        point = ord(ch)
        unit = point if point < 0x10000 else 0xD800 + ((point - 0x10000) >> 10)
        h = (h * 31 + unit) % 2**32
    return h


def firm_color(firm: str) -> str:
    """The firm's colour: its own for the six firms, else a spare one (the viewer's choice)."""
    return FIRM_COLORS.get(firm) or SPARE_COLORS[_viewer_hash(firm) % len(SPARE_COLORS)]


def config_color(index: int) -> str:
    """The colour of the ``index``-th configuration in a figure."""
    return CONFIG_COLORS[index % len(CONFIG_COLORS)]


def palette_json() -> str:
    """``{"firms": {...}, "spare": [...]}``, what the viewer's page needs."""
    return json.dumps({"firms": FIRM_COLORS, "spare": list(SPARE_COLORS)}, indent=2)
