"""A readable account of one session for `vtcode sessions show`: turns, items, compactions, usage.

A projection of the one fold of the log that the HTML page also uses (`report.model.
build_report`), so the text, JSON and HTML views cannot disagree. Built from the log (the source
of truth), not from the caches, so it is right even when the manifest is stale.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from vtcode.events.codec import encode_event
from vtcode.events.types import ThreadItem
from vtcode.jsontypes import encode
from vtcode.report.model import Entry, RunView, build_report, item_state
from vtcode.store.listing import SessionSummary

SUMMARY_CHARS = 80


def _short(text: str, limit: int = SUMMARY_CHARS) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def item_summary(item: ThreadItem) -> str:
    """One line saying what an item is about."""
    d: Any = item.details
    for attr in ("text", "message", "command", "query"):
        value = getattr(d, attr, None)
        if isinstance(value, str) and value:
            return _short(value)
    if hasattr(d, "tool_name"):
        return str(d.tool_name)
    if hasattr(d, "output"):
        return _short(str(d.output)) or "(no output)"
    if hasattr(d, "changes"):
        return ", ".join(f"{c.path} ({c.kind.value})" for c in d.changes)
    if hasattr(d, "event"):
        return str(d.event.value)
    return ""


@dataclasses.dataclass
class TurnView:
    number: int
    started: str | None
    ended: str | None = None
    outcome: str = "open"  # completed | failed | open
    message: str | None = None
    usage: dict[str, Any] | None = None
    items: list[dict[str, Any]] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Timeline:
    summary: SessionSummary
    turns: list[TurnView] = dataclasses.field(default_factory=list)
    compactions: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    resets: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    errors: list[str] = dataclasses.field(default_factory=list)
    completion: dict[str, Any] | None = None
    runs: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    unknown_events: int = 0
    first_seq: int | None = None
    last_seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        m = self.summary.manifest
        return {
            "session": self.summary.to_json(),
            "manifest": encode(m) if m is not None else None,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "turns": [dataclasses.asdict(t) for t in self.turns],
            "compactions": self.compactions,
            "context_resets": self.resets,
            "errors": self.errors,
            "completion": self.completion,
            "runs": self.runs,
            "unknown_events": self.unknown_events,
        }


def _row(item: ThreadItem, state: str) -> dict[str, Any]:
    return {"id": item.id, "type": item.type, "summary": item_summary(item), "state": state}


def _stamped(entry: Entry) -> dict[str, Any]:
    data = dict(entry.event or {})
    data["ts"] = entry.ts
    return data


def _run(run: RunView) -> dict[str, Any]:
    """One run (the first exec, each resume): how it started and how it ended, its own usage."""
    rec, c = run.record, run.completion
    return {
        "number": run.number,
        "first_seq": run.first_seq,
        "started": run.started,
        "ended": run.ended,
        "prompt": rec.prompt if rec else None,
        "provider": rec.provider if rec else None,
        "model": rec.model if rec else None,
        "instructions": [dataclasses.asdict(f) for f in rec.instructions] if rec else [],
        "instructions_digest": rec.instructions_digest if rec else None,
        "num_turns": run.num_turns,
        "usage": encode(run.usage),
        "total_cost_usd": run.cost,
        "subtype": c.subtype.value if c else None,
        "outcome_code": c.outcome_code if c else None,
    }


def session_timeline(workspace: Path, session_id: str) -> Timeline:
    report = build_report(workspace, session_id)
    tl = Timeline(
        summary=report.summary,
        completion=encode_event(report.completion) if report.completion else None,
        unknown_events=report.unknown_events,
        first_seq=report.first_seq,
        last_seq=report.last_seq,
        runs=[_run(r) for r in report.runs],
    )
    for segment in report.segments:
        view: TurnView | None = None
        if segment.turn is not None:
            t = segment.turn
            view = TurnView(
                number=t.number,
                started=t.started,
                ended=t.ended,
                outcome=t.outcome,
                message=t.message,
                usage=encode(t.usage) if t.usage is not None else None,
            )
            tl.turns.append(view)
        for entry in segment.entries:
            if entry.kind == "item" and entry.item is not None:
                if view is not None:
                    view.items.append(_row(entry.item, entry.state))
                    if entry.output is not None:
                        # a tool call's output is folded into its call's entry: list it after it
                        view.items.append(_row(entry.output, item_state(entry.output, True)))
            elif entry.kind == "compaction":
                tl.compactions.append(_stamped(entry))
            elif entry.kind == "reset":
                tl.resets.append(_stamped(entry))
            elif entry.kind == "error" and entry.event is not None:
                tl.errors.append(str(entry.event.get("message", "")))
    return tl
