"""What the session page shows, gathered from the canonical log in one pass.

The store's `Timeline` (for `sessions show`) keeps one summary line per item; the page needs the
final snapshot of every item (tool outcome, exit code, arguments, output), each tool output next
to its call, and where compactions and resets fell between turns, so it reads the log itself.
Built from events.jsonl, the source of truth, never from the caches.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
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
    ThreadStartedEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    UnknownEvent,
    Usage,
)
from vtcode.store.reader import SessionSummary, read_session_events, summarize

# Output tokens cost about five times input tokens at most list prices (and in the shipped replay
# scripts); used only to split a known session total across turns.
OUTPUT_WEIGHT = 5.0


@dataclasses.dataclass
class Entry:
    """One row of a turn (or of the stretch between turns), in log order.

    `kind` is `item` (with the item's final snapshot and, for a tool call, its output), or a
    marker: `compaction`, `reset` or `error` (with the encoded event).
    """

    kind: str
    seq: int | None
    ts: str | None
    item: ThreadItem | None = None
    state: str = ""
    output: ThreadItem | None = None
    event: dict[str, Any] | None = None


@dataclasses.dataclass
class TurnView:
    number: int
    started: str | None
    ended: str | None = None
    outcome: str = "open"  # completed | failed | open
    message: str | None = None
    usage: Usage | None = None

    @property
    def duration_s(self) -> float | None:
        return seconds_between(self.started, self.ended)


@dataclasses.dataclass
class Segment:
    """A turn with its entries, or (turn None) entries that fell outside any turn."""

    turn: TurnView | None
    entries: list[Entry] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class SessionReport:
    summary: SessionSummary
    thread_id: str | None = None
    segments: list[Segment] = dataclasses.field(default_factory=list)
    completion: ThreadCompletedEvent | None = None
    first_seq: int | None = None
    last_seq: int | None = None
    first_ts: str | None = None
    last_ts: str | None = None
    unknown_events: int = 0

    @property
    def turns(self) -> list[TurnView]:
        return [s.turn for s in self.segments if s.turn is not None]

    def entries(self, kind: str | None = None) -> list[Entry]:
        return [e for s in self.segments for e in s.entries if kind is None or e.kind == kind]

    def count_items(self, item_type: str) -> int:
        return sum(1 for e in self.entries("item") if e.item and e.item.type == item_type)

    @property
    def usage(self) -> Usage:
        """The thread's usage: `thread.completed`'s, else the sum of the turns seen so far."""
        if self.completion is not None:
            return self.completion.usage
        total = Usage()
        for t in self.turns:
            if t.usage is not None:
                total = total.add(t.usage)
        return total

    @property
    def duration_s(self) -> float | None:
        return seconds_between(self.first_ts, self.last_ts)

    def stop_message(self) -> str | None:
        """Why a run that did not succeed stopped: its last failed turn, else a thread error."""
        for t in reversed(self.turns):
            if t.message:
                return t.message
        errors = self.entries("error")
        return str(errors[-1].event.get("message")) if errors and errors[-1].event else None

    def cumulative_cost(self) -> list[float | None]:
        """Cumulative cost after each turn (see `apportion_cost`); all None when unpriced."""
        total = self.completion.total_cost_usd if self.completion else None
        return apportion_cost([t.usage for t in self.turns], total)


def seconds_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None


def usage_weight(usage: Usage | None) -> float:
    if usage is None:
        return 0.0
    return usage.input_tokens + OUTPUT_WEIGHT * usage.output_tokens


def apportion_cost(usages: list[Usage | None], total: float | None) -> list[float | None]:
    """Split a session's `total_cost_usd` across its turns by token weight, cumulatively.

    Events carry the cost of the whole thread only; per-turn usage is exact, so the split is
    exact whenever output tokens cost five times input (the replay scripts, Anthropic's list
    prices) and an estimate otherwise. The last priced point always equals the real total; a turn
    without usage (one stopped before its request) has no point.
    """
    if total is None:
        return [None] * len(usages)
    weights = [usage_weight(u) for u in usages]
    whole = sum(weights)
    out: list[float | None] = []
    running = 0.0
    for u, w in zip(usages, weights, strict=True):
        running += w
        out.append(None if u is None else (total * running / whole if whole else total))
    return out


def item_state(item: ThreadItem, completed: bool) -> str:
    status = getattr(item.details, "status", None)
    value = getattr(status, "value", None)
    if isinstance(value, str):
        return value
    return "completed" if completed else "in_progress"


def build_report(workspace: Path, session_id: str) -> SessionReport:
    """Read the session's log once and gather everything the page shows."""
    report = SessionReport(summary=summarize(workspace, session_id))
    segment = Segment(turn=None)
    entries_by_item: dict[str, Entry] = {}
    calls: dict[str, Entry] = {}  # tool_invocation item id -> its entry

    def close_segment() -> None:
        nonlocal segment
        if segment.turn is not None or segment.entries:
            report.segments.append(segment)
        segment = Segment(turn=None)

    for env in read_session_events(workspace, session_id):
        ev = env.event
        report.first_seq = report.first_seq or env.seq
        report.last_seq = env.seq
        report.first_ts = report.first_ts or env.ts
        report.last_ts = env.ts or report.last_ts
        if isinstance(ev, ThreadStartedEvent):
            report.thread_id = ev.thread_id
        elif isinstance(ev, TurnStartedEvent):
            close_segment()
            segment = Segment(turn=TurnView(number=len(report.turns) + 1, started=env.ts))
        elif isinstance(ev, TurnCompletedEvent | TurnFailedEvent):
            if segment.turn is not None:
                t = segment.turn
                t.ended = env.ts
                t.usage = ev.usage
                if isinstance(ev, TurnFailedEvent):
                    t.outcome, t.message = "failed", ev.message
                else:
                    t.outcome = "completed"
                close_segment()
        elif isinstance(ev, ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent):
            done = isinstance(ev, ItemCompletedEvent)
            d = ev.item.details
            entry = entries_by_item.get(ev.item.id)
            if isinstance(d, ToolOutputItem) and d.call_id in calls:
                call = calls[d.call_id]
                call.output = ev.item
                continue
            if entry is None:
                entry = Entry(kind="item", seq=env.seq, ts=env.ts)
                entries_by_item[ev.item.id] = entry
                segment.entries.append(entry)
                if isinstance(d, ToolInvocationItem):
                    calls[ev.item.id] = entry
            entry.item = ev.item
            entry.state = item_state(ev.item, done)
        elif isinstance(ev, ThreadCompactBoundaryEvent):
            segment.entries.append(Entry("compaction", env.seq, env.ts, event=encode_event(ev)))
        elif isinstance(ev, ContextResetEvent):
            segment.entries.append(Entry("reset", env.seq, env.ts, event=encode_event(ev)))
        elif isinstance(ev, ThreadErrorEvent):
            segment.entries.append(Entry("error", env.seq, env.ts, event=encode_event(ev)))
        elif isinstance(ev, ThreadCompletedEvent):
            report.completion = ev
        elif isinstance(ev, UnknownEvent):
            report.unknown_events += 1
    close_segment()
    return report
