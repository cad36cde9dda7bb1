"""`vtcode sessions show ID --html FILE`: one self-contained HTML page of a session.

Inline CSS and inline SVG only: no script, no framework, no network (a Content-Security-Policy
forbids all of them, as a second line of defence). Everything that comes from the log is hostile
(tool output is whatever a command printed) and goes through `esc`, which HTML-escapes it and
makes control characters and lone surrogates visible instead of passing them to the browser.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import IO, Any, assert_never

from vtcode import __version__
from vtcode.events.types import (
    AgentMessageItem,
    CommandExecutionItem,
    ErrorItem,
    FileChangeItem,
    HarnessItem,
    McpToolCallItem,
    PlanItem,
    ReasoningItem,
    ToolInvocationItem,
    ToolOutputItem,
    Usage,
    WebSearchItem,
)
from vtcode.outpath import check_output, write_output
from vtcode.report.model import Entry, Segment, SessionReport, TurnView, build_report
from vtcode.report.plot import COST_COLOR, TOKENS_COLOR, context_cost_svg, fmt_usd

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


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _block(summary: str, text: str, *, open_: bool = False, cls: str = "") -> str:
    lines = text.count("\n") + 1 if text else 0
    attr = " open" if open_ else ""
    return (
        f'<details class="{cls}"{attr}><summary>{esc(summary)} · {lines:,} line'
        f"{'s' if lines != 1 else ''}</summary><pre>{clip(text)}</pre></details>"
    )


def _output_text(item: ToolOutputItem) -> tuple[str, int | None, dict[str, Any]]:
    """The text a person wants from a tool output: exec tools wrap it in a JSON object."""
    code = item.exit_code
    try:
        data = json.loads(item.output) if item.output.startswith("{") else None
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("output"), str):
        extra = data.get("exit_code")
        if code is None and isinstance(extra, int) and not isinstance(extra, bool):
            code = extra
        return data["output"], code, data
    return item.output, code, {}


def _headline_arg(args: Any) -> str | None:
    if not isinstance(args, dict):
        return None
    for key in ("command", "cmd", "path", "pattern", "query", "url"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return f"$ {value}" if key in ("command", "cmd") else value
        if key in ("command", "cmd") and isinstance(value, list) and value:
            return "$ " + " ".join(str(v) for v in value)
    return None


def _tool_entry(e: Entry, d: ToolInvocationItem | CommandExecutionItem) -> str:
    out = e.output.details if e.output is not None else None
    if isinstance(d, ToolInvocationItem):
        name, args, state = d.tool_name, d.arguments, (d.outcome.value if d.outcome else e.state)
    else:
        name, args, state = "command", d.arguments, e.state
    head = [f'<code class="tool-name">{esc(name)}</code>', badge(state)]
    body: list[str] = []
    shown: str | None = None
    code: int | None = None
    if isinstance(d, CommandExecutionItem):
        shown, code = f"$ {d.command}", d.exit_code
        text = d.aggregated_output
        if text:
            body.append(_block("output", text, open_=text.count("\n") < OPEN_OUTPUT_LINES))
    else:
        shown = _headline_arg(args)
    if isinstance(out, ToolOutputItem):
        text, code, _ = _output_text(out)
        if out.spool_path:
            body.append(f'<div class="note">full output: <code>{esc(out.spool_path)}</code></div>')
        body.insert(0, _block("output", text, open_=text.count("\n") < OPEN_OUTPUT_LINES))
    if code is not None:
        head.append(badge(f"exit {code}", "ok" if code == 0 else "bad"))
    if args is not None:
        body.insert(0, _block("arguments", _pretty(args)))
    cmd = f'<div class="cmd"><code>{clip(shown, 2000)}</code></div>' if shown else ""
    return f'<div class="headline">{"".join(head)}</div>{cmd}{"".join(body)}'


def _item_body(e: Entry) -> str:
    assert e.item is not None
    d = e.item.details
    if isinstance(d, AgentMessageItem):
        return f'<div class="text">{clip(d.text)}</div>'
    if isinstance(d, ReasoningItem):
        first = " ".join(d.text.split())[:140]
        text = f'<div class="text">{clip(d.text)}</div>'
        return f"<details><summary>{esc(first)}</summary>{text}</details>"
    if isinstance(d, PlanItem):
        return f'<div class="text">{clip(d.text)}</div>'
    if isinstance(d, ToolInvocationItem | CommandExecutionItem):
        return _tool_entry(e, d)
    if isinstance(d, ToolOutputItem):  # an output whose call is not in the log
        text, code, _ = _output_text(d)
        extra = badge(f"exit {code}", "ok" if code == 0 else "bad") if code is not None else ""
        return (
            f'<div class="headline"><code>{esc(d.call_id)}</code>{badge(d.status.value)}{extra}'
            f"</div>{_block('output', text, open_=True)}"
        )
    if isinstance(d, FileChangeItem):
        rows = "".join(
            f"<li>{badge(c.kind.value, CHANGE_CLASS.get(c.kind.value))}{esc(c.path)}</li>"
            for c in d.changes
        )
        return f'<ul class="files">{rows}</ul>' + (
            "" if d.status.value == "completed" else badge(d.status.value)
        )
    if isinstance(d, HarnessItem):
        bits = [badge(d.event.value, "info")]
        if d.exit_code is not None:
            bits.append(badge(f"exit {d.exit_code}", "ok" if d.exit_code == 0 else "bad"))
        if d.attempt is not None:
            bits.append(f'<span class="note">attempt {d.attempt}</span>')
        rest = [esc(x) for x in (d.message, d.error_category) if x]
        if d.command:
            rest.append(f"<code>$ {esc(d.command)}</code>")
        if d.path:
            rest.append(f"<code>{esc(d.path)}</code>")
        return (
            f'<div class="headline">{"".join(bits)}</div><div class="text">{" · ".join(rest)}</div>'
        )
    if isinstance(d, ErrorItem):
        return f'<div class="text">{clip(d.message)}</div>'
    if isinstance(d, McpToolCallItem):
        head = f'<code class="tool-name">{esc(d.tool_name)}</code>' + (
            badge(d.status.value) if d.status else ""
        )
        body = _block("arguments", _pretty(d.arguments)) if d.arguments is not None else ""
        if d.result is not None:
            body += _block("result", d.result)
        return f'<div class="headline">{head}</div>{body}'
    if isinstance(d, WebSearchItem):
        results = "".join(f"<li>{esc(r)}</li>" for r in d.results or [])
        return f'<div class="text">{esc(d.query)}</div><ul class="files">{results}</ul>'
    assert_never(d)


TAGS = {
    "agent_message": "message",
    "tool_invocation": "tool",
    "tool_output": "output",
    "command_execution": "command",
    "file_change": "files",
    "error": "warning",
    "mcp_tool_call": "mcp",
    "web_search": "search",
}


def _marker(e: Entry) -> str:
    ev = e.event or {}
    if e.kind == "compaction":
        text = (
            f"compaction · {esc(ev.get('trigger'))} / {esc(ev.get('mode'))} · "
            f"{ev.get('original_message_count', 0):,} → {ev.get('compacted_message_count', 0):,}"
            " messages"
        )
        if ev.get("history_artifact_path"):
            text += f" · history <code>{esc(ev['history_artifact_path'])}</code>"
        return f'<li class="marker compaction">{text}</li>'
    if e.kind == "reset":
        return (
            f'<li class="marker reset">context reset · {esc(ev.get("trigger"))} at '
            f"{esc(ev.get('previous_context_usage_percent'))}% context usage · plan "
            f"{'kept' if ev.get('plan_preserved') else 'dropped'}</li>"
        )
    return f'<li class="marker error">error · {clip(str(ev.get("message", "")))}</li>'


def _entry(e: Entry) -> str:
    if e.kind != "item":
        return _marker(e)
    assert e.item is not None
    t = e.item.type
    cls = "reasoning" if t == "reasoning" else ""
    return (
        f'<li class="entry kind-{esc(t)} {cls}" data-item="{esc(e.item.id)}">'
        f'<span class="tag">{esc(TAGS.get(t, t))}</span>'
        f'<div class="body">{_item_body(e)}</div></li>'
    )


def _turn(seg: Segment, t: TurnView) -> str:
    entries = "".join(_entry(e) for e in seg.entries) or (
        '<li class="entry"><span></span><span class="empty">no items</span></li>'
    )
    failed = f'<p class="turn-failed">{clip(t.message)}</p>' if t.message else ""
    return (
        f'<article class="card turn {esc(t.outcome)}" id="turn-{t.number}" data-turn="{t.number}">'
        f"<header><h3>Turn {t.number}</h3>{badge(t.outcome)}"
        f'<span class="meta">{esc(fmt_usage(t.usage))}</span>'
        f'<span class="meta right">{esc(fmt_time(t.started))} · '
        f"{esc(fmt_duration(t.duration_s))}</span></header>"
        f'<ol class="entries">{entries}</ol>{failed}</article>'
    )


def _segments(report: SessionReport) -> str:
    out: list[str] = []
    if report.first_seq is not None and report.first_seq > 1:
        out.append(
            f'<p class="card empty">events 1-{report.first_seq - 1:,} were evicted from this '
            "long session's log (store.max_events); turns are numbered from the first one kept, "
            "usage, cost and the turn count above are the whole session's, the other counts are of "
            "the events kept.</p>"
        )
    for seg in report.segments:
        if seg.turn is not None:
            out.append(_turn(seg, seg.turn))
        else:
            out.append(
                f'<div class="between"><ol class="entries">'
                f"{''.join(_entry(e) for e in seg.entries)}</ol></div>"
            )
    return "".join(out) or '<p class="empty card">this session has no events yet</p>'


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _stat(label: str, value: str, sub: str = "") -> str:
    sub_html = f'<div class="sub">{sub}</div>' if sub else ""
    return (
        f'<div class="stat"><div class="label">{esc(label)}</div>'
        f'<div class="value">{value}</div>{sub_html}</div>'
    )


def _header(report: SessionReport) -> str:
    s, c = report.summary, report.completion
    pills = [badge(s.status, "info" if s.status == "active" else "muted", "pill")]
    if c is not None:
        pills.append(badge(c.subtype.value, OUTCOME_CLASS.get(c.subtype.value, "muted"), "pill"))
        if c.outcome_code != c.subtype.value:
            pills.append(badge(c.outcome_code, "muted", "pill"))
    else:
        pills.append(badge("no thread.completed", "muted", "pill"))
    when = f"created {esc(fmt_time(s.created_at, date=True))}"
    if s.updated_at:
        when += f" · updated {esc(fmt_time(s.updated_at, date=True))}"
    if report.thread_id and report.thread_id != s.session_id:
        when += f" · thread <code>{esc(report.thread_id)}</code>"
    result = ""
    if c is not None and c.result:
        result = f'<div class="result">{clip(c.result, 4000)}</div>'
    elif c is not None and c.subtype.value != "success":
        why = report.stop_message() or c.stop_reason or c.outcome_code
        reason = (
            f'<div class="note">stop reason: {esc(c.stop_reason)}</div>'
            if c.stop_reason and c.stop_reason != why
            else ""
        )
        kind = {"warn": "limit", "muted": "halted"}.get(OUTCOME_CLASS.get(c.subtype.value, ""))
        kind = kind or "stopped"
        result = f'<div class="result {kind}">{clip(why, 4000)}{reason}</div>'
    u = report.usage
    tools = report.count_items("tool_invocation") + report.count_items("command_execution")
    failed_tools = sum(
        1
        for e in report.entries("item")
        if e.item is not None
        and isinstance(e.item.details, ToolInvocationItem | CommandExecutionItem)
        and e.state == "failed"
    )
    changed = {
        ch.path
        for e in report.entries("item")
        if e.item is not None and isinstance(e.item.details, FileChangeItem)
        for ch in e.item.details.changes
    }
    warnings = report.count_items("error") + len(report.entries("error"))
    turns = c.num_turns if c is not None else len(report.turns)
    cost = "unknown"
    if c is not None and c.total_cost_usd is not None:
        cost = fmt_usd(c.total_cost_usd)
    stats = [
        _stat("Turns", f"{turns:,}", _plural(len(report.entries("compaction")), "compaction")),
        _stat("Input tokens", f"{u.input_tokens:,}", f"cached {u.cached_input_tokens:,}"),
        _stat("Output tokens", f"{u.output_tokens:,}"),
        _stat("Cost", esc(cost), "total_cost_usd" if cost != "unknown" else "pricing unknown"),
        _stat("Tool calls", f"{tools:,}", f"{failed_tools:,} failed"),
        _stat("Files changed", f"{len(changed):,}"),
        _stat("Warnings", f"{warnings:,}"),
        _stat(
            "Duration",
            esc(fmt_duration(report.duration_s)),
            f"{s.events:,} events" if s.events else "",
        ),
    ]
    return (
        f'<section class="card"><div class="top"><div><div class="kicker">vtcode session</div>'
        f"<h1>{esc(s.session_id)}</h1>"
        f'<div class="when">{when}</div></div><div class="pills">{"".join(pills)}</div></div>'
        f'{result}<div class="stats">{"".join(stats)}</div></section>'
    )


def _marks(report: SessionReport) -> list[tuple[float, str]]:
    marks: list[tuple[float, str]] = []
    closed = 0
    for seg in report.segments:
        for e in seg.entries:
            if e.kind in ("compaction", "reset"):
                x = (seg.turn.number - 0.5) if seg.turn is not None else closed + 0.5
                marks.append((x, "compaction" if e.kind == "compaction" else "context reset"))
        if seg.turn is not None:
            closed = seg.turn.number
    return marks


def _plot(report: SessionReport) -> str:
    turns = report.turns
    if not turns:
        return ""
    tokens = [t.usage.input_tokens if t.usage is not None else None for t in turns]
    cost = report.cumulative_cost()
    svg = context_cost_svg(tokens, cost, marks=_marks(report))
    if any(c is not None for c in cost):
        note = (
            "Context tokens are each turn's input tokens. Events carry the session's total cost "
            "only; it is split across turns by token weight (output tokens x5), which is exact "
            "when output costs five times input."
        )
        cost_legend = (
            f'<span><i class="line" style="background:{COST_COLOR}"></i>cumulative cost</span>'
        )
    else:
        note = (
            "Context tokens are each turn's input tokens. Cost unknown: no pricing for the model."
        )
        cost_legend = ""
    return (
        f'<section class="card"><h2>Context and cost per turn</h2><div class="legend">'
        f'<span><i style="background:{TOKENS_COLOR}"></i>context tokens (turn input_tokens)</span>'
        f'{cost_legend}</div>{svg}<p class="note">{esc(note)}</p></section>'
    )


@cache
def _css() -> str:
    return files("vtcode.report").joinpath("style.css").read_text(encoding="utf-8")


def render_html(report: SessionReport) -> str:
    """The whole page as one string."""
    sid = esc(report.summary.session_id)
    span = (
        f"seq {report.first_seq}-{report.last_seq}" if report.first_seq is not None else "no events"
    )
    unknown = f" · {report.unknown_events} unknown events" if report.unknown_events else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="vtcode {esc(__version__)}">'
        f"<title>vtcode session {sid}</title><style>{_css()}</style></head>"
        f"<body><main>{_header(report)}{_plot(report)}"
        f'<section class="timeline"><h2>Timeline</h2>'
        f"{_segments(report)}</section>"
        f"<footer>vtcode {esc(__version__)} · from events.jsonl ({esc(span)}){esc(unknown)}"
        "</footer></main></body></html>\n"
    )


def session_html(workspace: Path, session_id: str) -> str:
    """The page of one session, read from its canonical log."""
    return render_html(build_report(workspace, session_id))


def write_session_html(
    workspace: Path, session_id: str, target: str, stdout: IO[bytes]
) -> Path | None:
    """Write the page to `target` (`-`: `stdout`; see `vtcode.outpath` for what else is allowed
    and how); returns the path written (None for stdout)."""
    checked = check_output(target, workspace=workspace)  # refused before the page is built
    page = session_html(workspace, session_id).encode("utf-8")
    write_output(checked, page, stdout)
    return checked.path
