"""The top of the page: the session's header with tiles for the whole session, then one card per
run (the first `vtcode exec` and each `exec resume`) with its prompt, provider and model, outcome
and its own tiles.

Each run's `thread.completed` counts that run only (usage, cost, num_turns), so the whole
session's tiles are the sums over its runs, and the last run's outcome is the session's.
"""

from __future__ import annotations

from vtcode.events.types import (
    CommandExecutionItem,
    FileChangeItem,
    ThreadCompletedEvent,
    ToolInvocationItem,
    Usage,
)
from vtcode.report.fmt import (
    OUTCOME_CLASS,
    badge,
    clip,
    esc,
    fmt_duration,
    fmt_time,
    plural,
    stat,
)
from vtcode.report.model import RunView, SessionReport
from vtcode.report.plot import fmt_usd

PROMPT_LIMIT = 4000  # characters of a run's prompt shown (the artifact holds more)


def _outcome_pills(c: ThreadCompletedEvent | None, kind: str = "pill") -> list[str]:
    if c is None:
        return [badge("no thread.completed", "muted", kind)]
    pills = [badge(c.subtype.value, OUTCOME_CLASS.get(c.subtype.value, "muted"), kind)]
    if c.outcome_code != c.subtype.value:
        pills.append(badge(c.outcome_code, "muted", kind))
    return pills


def _result(report: SessionReport, c: ThreadCompletedEvent | None) -> str:
    """The run's final answer, or why it stopped."""
    if c is None:
        return ""
    if c.result:
        return f'<div class="result">{clip(c.result, 4000)}</div>'
    if c.subtype.value == "success":
        return ""
    why = report.stop_message() or c.stop_reason or c.outcome_code
    reason = (
        f'<div class="note">stop reason: {esc(c.stop_reason)}</div>'
        if c.stop_reason and c.stop_reason != why
        else ""
    )
    kind = {"warn": "limit", "muted": "halted"}.get(OUTCOME_CLASS.get(c.subtype.value, ""))
    return f'<div class="result {kind or "stopped"}">{clip(why, 4000)}{reason}</div>'


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else fmt_usd(cost)


def _usage_tiles(turns: int, compactions: int | None, u: Usage, cost: float | None) -> list[str]:
    priced = "total_cost_usd" if cost is not None else "pricing unknown"
    return [
        stat("Turns", f"{turns:,}", plural(compactions, "compaction") if compactions else ""),
        stat("Input tokens", f"{u.input_tokens:,}", f"cached {u.cached_input_tokens:,}"),
        stat("Output tokens", f"{u.output_tokens:,}"),
        stat("Cost", esc(_cost(cost)), priced),
    ]


def header(report: SessionReport) -> str:
    """The session card: id, the last run's outcome and answer, tiles for the whole session."""
    s, c = report.summary, report.completion
    pills = [badge(s.status, "info" if s.status == "active" else "muted", "pill")]
    pills += _outcome_pills(c)
    when = f"created {esc(fmt_time(s.created_at, date=True))}"
    if s.updated_at:
        when += f" · updated {esc(fmt_time(s.updated_at, date=True))}"
    if report.thread_id and report.thread_id != s.session_id:
        when += f" · thread <code>{esc(report.thread_id)}</code>"
    items = report.entries("item")
    tools = report.count_items("tool_invocation") + report.count_items("command_execution")
    failed_tools = sum(
        1
        for e in items
        if e.item is not None
        and isinstance(e.item.details, ToolInvocationItem | CommandExecutionItem)
        and e.state == "failed"
    )
    changed = {
        ch.path
        for e in items
        if e.item is not None and isinstance(e.item.details, FileChangeItem)
        for ch in e.item.details.changes
    }
    warnings = report.count_items("error") + len(report.entries("error"))
    runs = len(report.runs)
    tiles = [
        stat("Runs", f"{runs:,}", "resumed" if runs > 1 else ""),
        *_usage_tiles(
            report.num_turns, len(report.entries("compaction")), report.usage, report.cost
        ),
        stat("Tool calls", f"{tools:,}", f"{failed_tools:,} failed"),
        stat("Files changed", f"{len(changed):,}"),
        stat("Warnings", f"{warnings:,}"),
        stat(
            "Duration",
            esc(fmt_duration(report.duration_s)),
            esc(
                " · ".join(
                    part
                    for part in (
                        f"sum of {runs} runs, wall {fmt_duration(report.wall_s)}"
                        if runs > 1
                        else "",
                        f"{s.events:,} events" if s.events else "",
                    )
                    if part
                )
            ),
        ),
    ]
    scope = "whole session" if runs > 1 else "session"
    return (
        f'<section class="card"><div class="top"><div><div class="kicker">vtcode session</div>'
        f"<h1>{esc(s.session_id)}</h1>"
        f'<div class="when">{when}</div></div><div class="pills">{"".join(pills)}</div></div>'
        f"{_result(report, c)}"
        f'<div class="stats whole" data-scope="{scope}">{"".join(tiles)}</div></section>'
    )


def _run_card(report: SessionReport, run: RunView) -> str:
    rec = run.record
    where = [f"started {esc(fmt_time(run.started, date=True))}"]
    if rec is not None and (rec.provider or rec.model):
        where.append(
            f'provider <code class="provider">{esc(rec.provider or "?")}</code> · '
            f'model <code class="model">{esc(rec.model or "?")}</code>'
        )
    if run.first_seq is not None:
        where.append(f"from seq {run.first_seq:,}")
    if rec is None:
        prompt = '<div class="note">prompt, provider and model not recorded for this run</div>'
    elif rec.prompt:
        text = clip(rec.prompt, PROMPT_LIMIT)
        prompt = f'<div class="prompt"><span class="label">prompt</span>{text}</div>'
    else:
        prompt = '<div class="note">no prompt (an interactive or resumed run)</div>'
    first = run.turns[0].number if run.turns else None
    turns = f" · turns {first}-{run.turns[-1].number}" if first is not None else ""
    tiles = [
        *_usage_tiles(run.num_turns, None, run.usage, run.cost),
        stat("Duration", esc(fmt_duration(run.duration_s))),
    ]
    return (
        f'<article class="card run" id="run-{run.number}" data-run="{run.number}">'
        f'<div class="top"><div><h2>Run {run.number}{esc(turns)}</h2>'
        f'<div class="when">{" · ".join(where)}</div></div>'
        f'<div class="pills">{"".join(_outcome_pills(run.completion))}</div></div>'
        f'{prompt}<div class="stats">{"".join(tiles)}</div></article>'
    )


def runs_section(report: SessionReport) -> str:
    """One card per run, in order."""
    if not report.runs:
        return ""
    return f'<section class="runs">{"".join(_run_card(report, r) for r in report.runs)}</section>'
