"""The body of each timeline entry: messages, tool calls with their outputs, file changes with
their diffs, harness items and the compaction / reset / error markers between them.
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from vtcode.events.describe import describe_item
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
    WebSearchItem,
)
from vtcode.report.fmt import CHANGE_CLASS, OPEN_OUTPUT_LINES, badge, block, clip, esc, pretty
from vtcode.report.model import Entry
from vtcode.store.artifacts import DiffRecord

DIFF_LINES = 400  # lines of one file's diff shown on the page


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


DIFF_LINE_CLASS = {"+": "d-add", "-": "d-del", "@": "d-hunk", "\\": "d-meta"}


def _diff_line(line: str) -> str:
    """One diff line, coloured by its first character (file headers are metadata)."""
    cls = "d-meta" if line.startswith(("--- ", "+++ ")) else DIFF_LINE_CLASS.get(line[:1], "")
    return f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line)


def _diff(record: DiffRecord | None) -> str:
    """The write-time diff of one changed file (vtcode.store.artifacts), or why there is none."""
    if record is None:
        return '<div class="note">no diff recorded</div>'
    if record.diff is None:
        return f'<div class="note">no diff: {esc(record.note or "unknown")}</div>'
    if not record.diff:
        return '<div class="note">no change to the text</div>'
    lines = record.diff.splitlines()
    shown = lines[:DIFF_LINES]
    more = len(lines) - len(shown)
    tail = f'\n<span class="empty">… ({more:,} more lines)</span>' if more > 0 else ""
    plus = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++ "))
    minus = sum(1 for x in lines if x.startswith("-") and not x.startswith("--- "))
    return (
        f'<details class="diff" open><summary>diff · +{plus:,} -{minus:,}</summary>'
        f"<pre>{chr(10).join(_diff_line(x) for x in shown)}{tail}</pre></details>"
    )


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
            body.append(block("output", text, open_=text.count("\n") < OPEN_OUTPUT_LINES))
    else:
        shown = _headline_arg(args)
    if isinstance(out, ToolOutputItem):
        text, code, _ = _output_text(out)
        if out.spool_path:
            body.append(f'<div class="note">full output: <code>{esc(out.spool_path)}</code></div>')
        body.insert(0, block("output", text, open_=text.count("\n") < OPEN_OUTPUT_LINES))
    if code is not None:
        head.append(badge(f"exit {code}", "ok" if code == 0 else "bad"))
    if args is not None:
        body.insert(0, block("arguments", pretty(args)))
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
            f"</div>{block('output', text, open_=True)}"
        )
    if isinstance(d, FileChangeItem):
        rows = "".join(
            f"<li>{badge(c.kind.value, CHANGE_CLASS.get(c.kind.value))}{esc(c.path)}"
            f"{_diff(e.diffs.get(c.path))}</li>"
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
        body = block("arguments", pretty(d.arguments)) if d.arguments is not None else ""
        if d.result is not None:
            body += block("result", d.result)
        return f'<div class="headline">{head}</div>{body}'
    if isinstance(d, WebSearchItem):
        results = "".join(f"<li>{esc(r)}</li>" for r in d.results or [])
        return f'<div class="text">{esc(d.query)}</div><ul class="files">{results}</ul>'
    assert_never(d)


def _marker(e: Entry) -> str:
    ev = e.event or {}
    if e.kind == "compaction":
        grew = ev.get("compacted_message_count", 0) > ev.get("original_message_count", 0)
        what = "summary added, nothing older to compact" if grew else "compaction"
        text = (
            f"{what} · {esc(ev.get('trigger'))} / {esc(ev.get('mode'))} · "
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


def entry_html(e: Entry) -> str:
    if e.kind != "item":
        return _marker(e)
    assert e.item is not None
    t = e.item.type
    cls = "reasoning" if t == "reasoning" else ""
    return (
        f'<li class="entry kind-{esc(t)} {cls}" data-item="{esc(e.item.id)}">'
        f'<span class="tag">{esc(describe_item(e.item.details).label)}</span>'
        f'<div class="body">{_item_body(e)}</div></li>'
    )
