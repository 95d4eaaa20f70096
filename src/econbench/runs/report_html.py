"""The report as one self-contained ``index.html``: inline CSS, figures embedded as base64
``data:`` URIs, every table, and the runs that were left out — no external resource, so the
file can be mailed, archived or opened offline.

Wide tables (the AlloBench ladder with its framings) stay readable in a 1,400 px window: every
table scrolls sideways inside its own box with its first column (the policy or configuration)
pinned, and a table wider than :data:`WIDE_CHARS` characters is set compact, its standard
errors (``± 0.042``) in smaller, lighter type. Two-part cells (``score / first sight``) take two
lines. The text is the Markdown's, character for character.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from pathlib import Path

from econbench import __version__
from econbench.runs.figures import FigureFile
from econbench.runs.frames import RunFrames
from econbench.runs.report import Report, Table

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 1360px; padding: 0 1rem; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.7rem; margin-bottom: 0.2rem; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2rem; margin-top: 2.5rem; }
h3 { margin-top: 1.8rem; }
.meta { color: #666; font-size: 0.9rem; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: separate; border-spacing: 0; font-size: 0.85rem; margin: 0.6rem 0;
        font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 0.3rem 0.6rem; text-align: right;
         white-space: nowrap; background: #fff; }
th { background: #f5f5f7; border-bottom: 2px solid #bbb; }
th.l, td.l { text-align: left; }
th:first-child, td:first-child { position: sticky; left: 0; z-index: 1;
         box-shadow: inset -1px 0 0 #d0d0d0; white-space: normal; min-width: 7rem;
         max-width: 18rem; overflow-wrap: anywhere; }
table.wide { font-size: 0.78rem; }
table.wide th, table.wide td { padding: 0.25rem 0.45rem; }
table.wide th { white-space: normal; min-width: 3rem; }
table.wide td.l:not(:first-child) { white-space: normal; min-width: 6rem; max-width: 14rem; }
.se { font-size: 0.86em; color: #6b6b70; }
.part { display: block; }
tr.break td { border-top: 2px solid #888; }
ul.notes { color: #555; font-size: 0.82rem; margin-top: 0.2rem; }
figure { margin: 1.2rem 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.85rem; }
nav a { margin-right: 1rem; }
.status-running, .status-stopped { color: #a15c00; font-weight: 600; }
"""


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


WIDE_CHARS = 130
"""A table whose widest cells add up to more characters than this is set compact."""
_SE = re.compile(r"± [0-9][0-9,.]*")


def is_wide(table: Table) -> bool:
    """Whether the table's widest cell per column add up to more than :data:`WIDE_CHARS`."""
    width = 0
    for column in table.display.columns:
        cells = [str(column), *(str(v) for v in table.display[column])]
        width += max(len(c) for c in cells) + 2
    return width > WIDE_CHARS


def _cell(value: object, compact: bool) -> str:
    """A cell's text, escaped; in a compact table its ``± se`` parts in a smaller span and a
    two-part cell (``score / first sight``) on two lines, so a ladder column is half as wide."""
    if not compact:
        return _esc(value)
    parts = [
        _SE.sub(lambda m: f'<span class="se">{m.group(0)}</span>', _esc(p))
        for p in str(value).split(" / ")
    ]
    if len(parts) == 1:
        return parts[0]
    return "".join(
        f'<span class="part">{p}{" / " if i < len(parts) - 1 else ""}</span>'
        for i, p in enumerate(parts)
    )


def table_html(table: Table) -> str:
    """The display frame as an HTML table, its title above and its notes below."""
    cols = list(table.display.columns)
    wide = is_wide(table)
    align = ['class="l"' if i < table.text_columns else 'class="r"' for i in range(len(cols))]
    head = "".join(f"<th {a}>{_esc(c)}</th>" for a, c in zip(align, cols, strict=True))
    body = []
    for i, row in enumerate(table.display.itertuples(index=False)):
        cls = ' class="break"' if i in table.breaks else ""
        cells = "".join(f"<td {a}>{_cell(v, wide)}</td>" for a, v in zip(align, row, strict=True))
        body.append(f"<tr{cls}>{cells}</tr>")
    notes = "".join(f"<li>{_esc(n)}</li>" for n in table.notes)
    table_class = ' class="wide"' if wide else ""
    files = ", ".join(f"{table.name}.{ext}" for ext in ("md", "csv", "tex"))
    return (
        f'<h3 id="{_esc(table.name)}">{_esc(table.title)}</h3>\n'
        f'<div class="scroll"><table{table_class}>'
        f"<thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>\n"
        f'<ul class="notes">{notes}<li>Files: {_esc(files)}</li></ul>\n'
    )


def figure_html(figure: FigureFile) -> str:
    """The PNG inlined as a data URI."""
    data = base64.b64encode(figure.path.read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{_esc(figure.title)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{_esc(figure.title)} ({_esc('figures/' + figure.path.name)})"
        "</figcaption></figure>\n"
    )


def runs_html(runs: Sequence[RunFrames], title: str) -> str:
    """A list of runs: configuration, seed, status, directory."""
    if not runs:
        return ""
    rows = "".join(
        f'<tr><td class="l">{_esc(r.label)}</td><td class="l">{_esc(r.benchmark)}</td>'
        f'<td class="r">{"" if r.seed is None else _esc(r.seed)}</td>'
        f'<td class="l status-{_esc(r.status)}">{_esc(r.status)}</td>'
        f'<td class="l">{_esc(r.path)}</td></tr>'
        for r in runs
    )
    head = "".join(
        f'<th class="{"r" if h == "seed" else "l"}">{h}</th>'
        for h in ("configuration", "benchmark", "seed", "status", "directory")
    )
    return (
        f"<h3>{_esc(title)} ({len(runs)})</h3>\n"
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>\n"
    )


def render(report: Report, figures: Sequence[FigureFile]) -> str:
    """The whole page."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(report.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_esc(report.title)}</h1>",
        f'<p class="meta">econbench {_esc(__version__)} · {len(report.runs)} run(s) in the '
        f"tables · {len(report.excluded)} left out</p>",
    ]
    by_section: dict[str, list[FigureFile]] = {}
    for figure in figures:
        by_section.setdefault(figure.section, []).append(figure)
    sections = []
    for section in report.sections:
        shown, figs = section.page_tables(), by_section.get(section.benchmark, [])
        if shown or figs:
            sections.append((section.benchmark, section.title, shown, figs))
    nav = [f'<a href="#{key}">{name}</a>' for key, name, _, _ in sections]
    parts.append("<nav>" + "".join(nav) + '<a href="#runs">Runs</a></nav>')
    if not sections:
        parts.append("<p>No completed run to tabulate; see the runs below.</p>")
    for key, name, section_tables, section_figs in sections:
        parts.append(f'<h2 id="{key}">{name}</h2>')
        parts += [table_html(t) for t in section_tables]
        if section_figs:
            parts.append("<h3>Figures</h3>")
            parts += [figure_html(f) for f in section_figs]
    parts.append('<h2 id="runs">Runs</h2>')
    parts.append(runs_html(report.runs, "Runs in the tables"))
    if report.excluded:
        parts.append(runs_html(report.excluded, "Runs not included"))
        parts.append(
            '<p class="meta">Only completed runs enter the tables; '
            "<code>econbench report --include-partial</code> adds the others, marked †.</p>"
        )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_html(report: Report, figures: Sequence[FigureFile], path: Path) -> Path:
    path.write_text(render(report, figures), encoding="utf-8")
    return path
