"""A readable account of one session for `vtcode sessions show`: turns, items, compactions, usage.

Built from the log (the source of truth), not from the caches, so it is right even when the
manifest is stale.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from vtcode.events.codec import encode_event
from vtcode.events.types import (
    ContextResetEvent,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadErrorEvent,
    ThreadItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    UnknownEvent,
)
from vtcode.jsontypes import encode
from vtcode.store.reader import SessionSummary, read_session_events, summarize

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
            "unknown_events": self.unknown_events,
        }


def session_timeline(workspace: Path, session_id: str) -> Timeline:
    tl = Timeline(summary=summarize(workspace, session_id))
    current: TurnView | None = None
    items: dict[str, dict[str, Any]] = {}
    for env in read_session_events(workspace, session_id):
        ev = env.event
        tl.first_seq = tl.first_seq or env.seq
        tl.last_seq = env.seq
        if isinstance(ev, TurnStartedEvent):
            current = TurnView(number=len(tl.turns) + 1, started=env.ts)
            tl.turns.append(current)
            items = {}
        elif isinstance(ev, TurnCompletedEvent | TurnFailedEvent):
            if current is not None:
                current.ended = env.ts
                current.outcome = "completed" if isinstance(ev, TurnCompletedEvent) else "failed"
                current.message = ev.message if isinstance(ev, TurnFailedEvent) else None
                current.usage = encode(ev.usage) if ev.usage is not None else None
                current = None
        elif isinstance(ev, ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent):
            row = items.get(ev.item.id)
            if row is None:
                row = items[ev.item.id] = {"id": ev.item.id, "type": ev.item.type}
                if current is not None:
                    current.items.append(row)
            row["summary"] = item_summary(ev.item)
            status = getattr(ev.item.details, "status", None)
            row["state"] = getattr(status, "value", None) or (
                "completed" if isinstance(ev, ItemCompletedEvent) else "in_progress"
            )
        elif isinstance(ev, ThreadCompactBoundaryEvent):
            data = encode_event(ev)
            data["ts"] = env.ts
            tl.compactions.append(data)
        elif isinstance(ev, ContextResetEvent):
            data = encode_event(ev)
            data["ts"] = env.ts
            tl.resets.append(data)
        elif isinstance(ev, ThreadErrorEvent):
            tl.errors.append(ev.message)
        elif isinstance(ev, ThreadCompletedEvent):
            tl.completion = encode_event(ev)
        elif isinstance(ev, UnknownEvent):
            tl.unknown_events += 1
    return tl
