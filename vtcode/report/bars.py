"""An inline SVG chart of grouped horizontal bars: one group per category (a task, an agent),
one bar per series (an agent, a measure), a shared axis with round ticks.

Plain SVG text, no script and no external reference, like `plot.py`, so a page that embeds it
stays one self-contained file; every label is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vtcode.report.fmt import esc
from vtcode.report.plot import AXIS_TEXT, GRID_COLOR, nice_top

__all__ = ["SERIES_COLORS", "grouped_bars_svg"]

SERIES_COLORS = ("#3b82f6", "#f97316", "#a855f7", "#10b981", "#ef4444", "#64748b")
WIDTH = 540
LABEL_W = 170
PAD_RIGHT = 56
BAR_H = 12
GAP = 10
TOP = 26


def grouped_bars_svg(
    title: str,
    categories: Sequence[str],
    series: Sequence[str],
    values: Sequence[Sequence[float | None]],
    fmt: Callable[[float], str],
    *,
    top: float | None = None,
) -> str:
    """`values[i][j]` is category i, series j (None: no bar, shown as "-")."""
    known = [v for row in values for v in row if v is not None]
    axis_top = top if top is not None else nice_top(max(known, default=0.0))
    plot_w = WIDTH - LABEL_W - PAD_RIGHT
    group_h = len(series) * BAR_H + GAP
    height = TOP + len(categories) * group_h + 24
    parts = [
        f'<svg class="bars" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-label="{esc(title)}">',
        f'<text x="0" y="14" font-size="13" font-weight="600" fill="#1f2937">{esc(title)}</text>',
    ]
    for tick in range(5):
        x = LABEL_W + plot_w * tick / 4
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{height - 20}" '
            f'stroke="{GRID_COLOR}"/>'
            f'<text x="{x:.1f}" y="{height - 6}" font-size="10" fill="{AXIS_TEXT}" '
            f'text-anchor="middle">{esc(fmt(axis_top * tick / 4))}</text>'
        )
    for i, name in enumerate(categories):
        y0 = TOP + i * group_h
        mid = y0 + len(series) * BAR_H / 2 + 4
        shown = name if len(name) <= 26 else name[:25] + "…"
        parts.append(
            f'<text x="{LABEL_W - 8}" y="{mid:.1f}" font-size="11" fill="#1f2937" '
            f'text-anchor="end"><title>{esc(name)}</title>{esc(shown)}</text>'
        )
        for j, label in enumerate(series):
            v = values[i][j] if j < len(values[i]) else None
            y = y0 + j * BAR_H
            color = SERIES_COLORS[j % len(SERIES_COLORS)]
            w = 0.0 if v is None or axis_top <= 0 else plot_w * min(v, axis_top) / axis_top
            text = "-" if v is None else fmt(v)
            parts.append(
                f'<rect x="{LABEL_W}" y="{y}" width="{w:.1f}" height="{BAR_H - 2}" '
                f'fill="{color}"><title>{esc(label)}: {esc(text)}</title></rect>'
                f'<text x="{LABEL_W + w + 4:.1f}" y="{y + BAR_H - 3}" font-size="10" '
                f'fill="{AXIS_TEXT}">{esc(text)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
