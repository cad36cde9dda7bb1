"""Formatting shared by the page's parts: escaping (everything from the log is hostile), badges,
times, durations, usage, collapsible text blocks and stat tiles.

`esc` HTML-escapes text and makes control characters and lone surrogates visible instead of
passing them to the browser; every other helper goes through it.
"""

from __future__ import annotations

import json
from datetime import datetime
from html import escape
from typing import Any

from vtcode.events.types import Usage

TEXT_LIMIT = 20_000  # characters of one message, argument block or output shown in full
OPEN_OUTPUT_LINES = 12  # outputs up to this many lines are shown expanded

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'"

_CTRL = {c: f"\\x{c:02x}" for c in (*range(32), *range(127, 160)) if c not in (9, 10, 13)}

OUTCOME_CLASS = {
    "success": "ok",
    "error_max_turns": "warn",
    "error_max_budget_usd": "warn",
    "error_during_execution": "bad",
    "cancelled": "muted",
}
STATE_CLASS = {
    "success": "ok",
    "completed": "ok",
    "error": "bad",
    "failed": "bad",
    "invalid_tool": "bad",
    "hook_denied": "warn",
    "permission_rejected": "warn",
    "permission_cancelled": "warn",
    "followup": "info",
    "cancelled": "muted",
    "in_progress": "info",
    "started": "info",
    "open": "info",
}
CHANGE_CLASS = {"add": "ok", "update": "info", "delete": "bad"}


def esc(text: object) -> str:
    """HTML-escaped text; control characters shown as \\xNN, lone surrogates replaced."""
    s = str(text)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        s = s.encode("utf-8", "replace").decode("utf-8")
    return escape(s.translate(_CTRL), quote=True)


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return esc(text)
    more = len(text) - limit
    return f'{esc(text[:limit])}<span class="empty">… ({more:,} more characters)</span>'


def badge(label: str, cls: str | None = None, kind: str = "badge") -> str:
    return f'<span class="{kind} {cls or STATE_CLASS.get(label, "muted")}">{esc(label)}</span>'


def fmt_time(ts: str | None, *, date: bool = False) -> str:
    if not ts:
        return "-"
    try:
        t = datetime.fromisoformat(ts)
    except ValueError:
        return ts
    return t.strftime("%Y-%m-%d %H:%M:%S UTC" if date else "%H:%M:%S")


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    m, s = divmod(round(seconds), 60)
    if m < 60:
        return f"{m} min {s} s"
    h, m = divmod(m, 60)
    return f"{h} h {m} min"


def fmt_usage(u: Usage | None) -> str:
    if u is None:
        return "no usage"
    parts = [f"in {u.input_tokens:,}", f"out {u.output_tokens:,}"]
    if u.cached_input_tokens:
        parts.append(f"cached {u.cached_input_tokens:,}")
    if u.cache_creation_tokens:
        parts.append(f"cache write {u.cache_creation_tokens:,}")
    return " · ".join(parts)


def pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def block(summary: str, text: str, *, open_: bool = False, cls: str = "") -> str:
    lines = text.count("\n") + 1 if text else 0
    attr = " open" if open_ else ""
    return (
        f'<details class="{cls}"{attr}><summary>{esc(summary)} · {lines:,} line'
        f"{'s' if lines != 1 else ''}</summary><pre>{clip(text)}</pre></details>"
    )


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def stat(label: str, value: str, sub: str = "") -> str:
    sub_html = f'<div class="sub">{sub}</div>' if sub else ""
    return (
        f'<div class="stat"><div class="label">{esc(label)}</div>'
        f'<div class="value">{value}</div>{sub_html}</div>'
    )
