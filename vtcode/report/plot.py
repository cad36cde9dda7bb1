"""An inline SVG chart: context tokens per turn (bars) and cumulative cost (a line), two axes.

Plain SVG text, no script and no external references, so the page stays one self-contained file.
Numbers only come from the log; every label is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

TOKENS_COLOR = "#3b82f6"
COST_COLOR = "#f97316"
MARK_COLOR = "#a855f7"
GRID_COLOR = "#e5e7eb"
AXIS_TEXT = "#6b7280"

WIDTH = 1120
HEIGHT = 300
PAD_LEFT = 64
PAD_RIGHT = 72
PAD_TOP = 20
PAD_BOTTOM = 44


def nice_top(value: float, divisions: int = 4) -> float:
    """The smallest `divisions` x (1, 2 or 5 x 10^k) at or above `value`, so that both axes
    share gridlines and every tick is a round number."""
    if value <= 0:
        return float(divisions)
    raw = value / divisions
    exp = math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        step = m * 10.0**exp
        if step * divisions >= value * (1 - 1e-12):
            return step * divisions
    return 10.0 ** (exp + 1) * divisions  # pragma: no cover - the loop always returns


def fmt_tokens(n: float) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:g}M"
    if n >= 1000:
        return f"{n / 1000:g}k"
    return f"{n:g}"


def fmt_usd(x: float) -> str:
    if x == 0:
        return "$0"
    if x >= 100:
        return f"${x:,.0f}"
    if x >= 1:
        return f"${x:.2f}"
    digits = max(2, 1 - math.floor(math.log10(x)) + 1)
    return f"${x:.{digits}f}".rstrip("0").rstrip(".")


def context_cost_svg(
    tokens: Sequence[int | None],
    cost: Sequence[float | None],
    *,
    marks: Sequence[tuple[float, str]] = (),
) -> str:
    """The chart for turns 1..N: `tokens[i]` is turn i+1's input tokens, `cost[i]` the cumulative
    cost after it (None: unknown). `marks` are (x in turns, label) vertical lines, e.g. a
    compaction after turn 2 at x=2.5."""
    n = len(tokens)
    plot_w = WIDTH - PAD_LEFT - PAD_RIGHT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    x0, y0 = PAD_LEFT, PAD_TOP + plot_h  # bottom-left corner of the plot area
    top_tokens = nice_top(max([t or 0 for t in tokens] + [1]))
    priced = [c for c in cost if c is not None]
    top_cost = nice_top(max(priced)) if priced and max(priced) > 0 else None
    slot = plot_w / max(n, 1)

    def xc(turn: float) -> float:  # centre of turn `turn` (1-based; fractional for marks)
        return x0 + (turn - 0.5) * slot

    def yt(v: float) -> float:
        return y0 - plot_h * v / top_tokens

    parts: list[str] = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="100%" role="img" aria-label="context tokens and cumulative cost per turn">'
    ]
    parts.append(f"<title>{escape('context tokens per turn and cumulative cost')}</title>")
    # grid and left axis (tokens)
    for i in range(5):
        v = top_tokens * i / 4
        y = yt(v)
        parts.append(
            f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + plot_w}" y2="{y:.1f}" '
            f'stroke="{GRID_COLOR}" stroke-width="1"/>'
        )
        parts.append(
            f'<text x="{x0 - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="12" '
            f'fill="{AXIS_TEXT}">{escape(fmt_tokens(v))}</text>'
        )
        if top_cost is not None:
            parts.append(
                f'<text x="{x0 + plot_w + 8}" y="{y + 4:.1f}" font-size="12" '
                f'fill="{COST_COLOR}">{escape(fmt_usd(top_cost * i / 4))}</text>'
            )
    # bars: context (input) tokens of each turn
    bar_w = max(1.0, min(48.0, slot * 0.6))
    for i, t in enumerate(tokens, 1):
        if t is None:
            continue
        h = max(1.0, plot_h * t / top_tokens) if t > 0 else 0.0
        parts.append(
            f'<rect class="bar" x="{xc(i) - bar_w / 2:.1f}" y="{y0 - h:.1f}" width="{bar_w:.1f}" '
            f'height="{h:.1f}" rx="3" fill="{TOKENS_COLOR}">'
            f"<title>turn {i}: {t:,} input tokens</title></rect>"
        )
    # x axis labels (thinned so they never overlap)
    step = max(1, math.ceil(n / 24))
    for i in range(1, n + 1):
        if i % step and i != 1 and i != n:
            continue
        parts.append(
            f'<text x="{xc(i):.1f}" y="{y0 + 18}" text-anchor="middle" font-size="12" '
            f'fill="{AXIS_TEXT}">{i}</text>'
        )
    parts.append(
        f'<text x="{x0 + plot_w / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle" font-size="12" '
        f'fill="{AXIS_TEXT}">turn</text>'
    )
    parts.append(
        f'<line x1="{x0}" y1="{y0}" x2="{x0 + plot_w}" y2="{y0}" stroke="{AXIS_TEXT}" '
        f'stroke-width="1"/>'
    )
    # compaction / reset marks
    for x, label in marks:
        xm = xc(x)
        parts.append(
            f'<line class="mark" x1="{xm:.1f}" y1="{PAD_TOP}" x2="{xm:.1f}" y2="{y0}" '
            f'stroke="{MARK_COLOR}" stroke-dasharray="4 3" stroke-width="2">'
            f"<title>{escape(label)}</title></line>"
            f'<text x="{xm + 4:.1f}" y="{PAD_TOP + 12}" font-size="11" '
            f'fill="{MARK_COLOR}">{escape(label)}</text>'
        )
    # cumulative cost line (right axis)
    if top_cost is not None:
        pts = [(xc(i), y0 - plot_h * c / top_cost) for i, c in enumerate(cost, 1) if c is not None]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        parts.append(
            f'<polyline class="cost" points="{path}" fill="none" stroke="{COST_COLOR}" '
            f'stroke-width="3" stroke-linejoin="round" stroke-linecap="round"/>'
        )
        dots = [(i, c) for i, c in enumerate(cost, 1) if c is not None] if n <= 30 else []
        for (x, y), (i, c) in zip(pts, dots, strict=False):
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" fill="#fff" stroke="{COST_COLOR}" '
                f'stroke-width="2.5"><title>after turn {i}: {escape(fmt_usd(c))}</title></circle>'
            )
    parts.append("</svg>")
    return "".join(parts)
