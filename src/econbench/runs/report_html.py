"""The report as one self-contained ``index.html``: inline CSS, figures embedded as base64
``data:`` URIs, every table, and the runs that were left out — no external resource, so the
file can be mailed, archived or opened offline.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from econbench import __version__
from econbench.runs.figures import FigureFile
from econbench.runs.frames import RunFrames
from econbench.runs.report import Report, Table

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 1200px; padding: 0 1rem; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.7rem; margin-bottom: 0.2rem; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2rem; margin-top: 2.5rem; }
h3 { margin-top: 1.8rem; }
.meta { color: #666; font-size: 0.9rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.6rem 0; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 0.3rem 0.6rem; text-align: right;
         white-space: nowrap; }
th { background: #f5f5f7; border-bottom: 2px solid #bbb; }
th.l, td.l { text-align: left; }
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


def table_html(table: Table) -> str:
    """The display frame as an HTML table, its title above and its notes below."""
    cols = list(table.display.columns)
    align = ['class="l"' if i < table.text_columns else 'class="r"' for i in range(len(cols))]
    head = "".join(f"<th {a}>{_esc(c)}</th>" for a, c in zip(align, cols, strict=True))
    body = []
    for i, row in enumerate(table.display.itertuples(index=False)):
        cls = ' class="break"' if i in table.breaks else ""
        cells = "".join(f"<td {a}>{_esc(v)}</td>" for a, v in zip(align, row, strict=True))
        body.append(f"<tr{cls}>{cells}</tr>")
    notes = "".join(f"<li>{_esc(n)}</li>" for n in table.notes)
    files = ", ".join(f"{table.name}.{ext}" for ext in ("md", "csv", "tex"))
    return (
        f'<h3 id="{_esc(table.name)}">{_esc(table.title)}</h3>\n'
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
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


_COFFEE_TABLES = ("table2", "table2_firms", "table3")
_ALLO_TABLES = ("ladder", "ladder_paper", "kappa")


def render(report: Report, figures: Sequence[FigureFile]) -> str:
    """The whole page."""
    tables = {t.name: t for t in report.tables}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(report.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_esc(report.title)}</h1>",
        f'<p class="meta">econbench {_esc(__version__)} · {len(report.runs)} run(s) in the '
        f"tables · {len(report.excluded)} left out</p>",
    ]
    sections = []
    coffee_tables = [tables[n] for n in _COFFEE_TABLES if n in tables]
    coffee_figs = [f for f in figures if f.section == "coffee"]
    allo_tables = [tables[n] for n in _ALLO_TABLES if n in tables]
    allo_figs = [f for f in figures if f.section == "allo"]
    if coffee_tables or coffee_figs:
        sections.append(("coffee", "CoffeeBench", coffee_tables, coffee_figs))
    if allo_tables or allo_figs:
        sections.append(("allo", "AlloBench", allo_tables, allo_figs))
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
