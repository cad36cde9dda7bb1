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

from vtcode.clock import parse_rfc3339
from vtcode.events.codec import encode_event
from vtcode.events.types import (
    ContextResetEvent,
    FileChangeItem,
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
from vtcode.store.artifacts import DiffRecord, RunRecord, read_diffs, read_prompts, read_runs
from vtcode.store.listing import SessionSummary, summarize
from vtcode.store.reader import read_session_events

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
    diffs: dict[str, DiffRecord] = dataclasses.field(default_factory=dict)  # file_change: by path


@dataclasses.dataclass
class TurnView:
    number: int
    started: str | None
    ended: str | None = None
    outcome: str = "open"  # completed | failed | open
    message: str | None = None
    usage: Usage | None = None
    prompt: str | None = None  # what the user typed for it (chat; vtcode.store.artifacts)

    @property
    def duration_s(self) -> float | None:
        return seconds_between(self.started, self.ended)


@dataclasses.dataclass
class Segment:
    """A turn with its entries, or (turn None) entries that fell outside any turn."""

    turn: TurnView | None
    entries: list[Entry] = dataclasses.field(default_factory=list)
    run: int = 1


@dataclasses.dataclass
class RunView:
    """One run of the session: the first `vtcode exec`, then each `exec resume` (each opens with
    `thread.started` and closes with its own `thread.completed`, whose usage, cost and turn
    count are that run's only)."""

    number: int
    first_seq: int | None
    started: str | None
    ended: str | None = None
    turns: list[TurnView] = dataclasses.field(default_factory=list)
    completion: ThreadCompletedEvent | None = None
    record: RunRecord | None = None  # prompt, provider and model (vtcode.store.artifacts)

    @property
    def usage(self) -> Usage:
        """The run's `thread.completed` usage, else the sum of its turns seen so far."""
        if self.completion is not None:
            return self.completion.usage
        total = Usage()
        for t in self.turns:
            if t.usage is not None:
                total = total.add(t.usage)
        return total

    @property
    def num_turns(self) -> int:
        return self.completion.num_turns if self.completion is not None else len(self.turns)

    @property
    def cost(self) -> float | None:
        return self.completion.total_cost_usd if self.completion is not None else None

    @property
    def duration_s(self) -> float | None:
        return seconds_between(self.started, self.ended)


@dataclasses.dataclass
class SessionReport:
    summary: SessionSummary
    thread_id: str | None = None
    segments: list[Segment] = dataclasses.field(default_factory=list)
    runs: list[RunView] = dataclasses.field(default_factory=list)
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
        """The whole session's usage: the sum of its runs' (each run's `thread.completed` counts
        that run only)."""
        total = Usage()
        for run in self.runs:
            total = total.add(run.usage)
        return total

    @property
    def num_turns(self) -> int:
        return sum(run.num_turns for run in self.runs)

    @property
    def cost(self) -> float | None:
        """The sum of the priced runs' costs; None when no run was priced."""
        known = [run.cost for run in self.runs if run.cost is not None]
        return sum(known) if known else None

    @property
    def duration_s(self) -> float | None:
        """The time the runs took, added up: a session resumed hours later did not run for
        hours (two runs of 0.26 s and 0.14 s are 0.40 s). Falls back to the wall time when no
        run has both ends."""
        known = [d for d in (run.duration_s for run in self.runs) if d is not None]
        return sum(known) if known else self.wall_s

    @property
    def wall_s(self) -> float | None:
        """From the first event to the last, pauses between runs included."""
        return seconds_between(self.first_ts, self.last_ts)

    def stop_message(self) -> str | None:
        """Why a run that did not succeed stopped: its last failed turn, else a thread error."""
        for t in reversed(self.turns):
            if t.message:
                return t.message
        errors = self.entries("error")
        return str(errors[-1].event.get("message")) if errors and errors[-1].event else None

    def cumulative_cost(self) -> list[float | None]:
        """Cumulative cost after each turn across runs (each run's total split over its own
        turns by `apportion_cost`, added to the runs before it); all None when unpriced."""
        out: list[float | None] = []
        before = 0.0
        for run in self.runs:
            split = apportion_cost([t.usage for t in run.turns], run.cost)
            out.extend(None if c is None else before + c for c in split)
            before += run.cost or 0.0
        return out


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


class _DiffMatcher:
    """Pairs each change of a `file_change` item with the diff its tool recorded at write time:
    same path, written between the tool call's start and the item (never by position, so a
    record whose item a crash lost is never shown against another change)."""

    def __init__(self, records: list[DiffRecord]) -> None:
        self.records = [(parse_rfc3339(r.ts), r) for r in records]
        self.used: set[int] = set()

    def take(self, path: str, since: str | None, until: str | None) -> DiffRecord | None:
        lo, hi = (parse_rfc3339(t) if t else None for t in (since, until))
        for i, (at, record) in enumerate(self.records):
            if i in self.used or record.path != path or at is None:
                continue
            if (lo is None or at >= lo) and (hi is None or at <= hi):
                self.used.add(i)
                return record
        return None


def _take_prompt(prompts: list[tuple[datetime | None, str]], ts: str | None) -> str | None:
    """The last prompt typed before a turn started (the ones before it were not turns: they
    are consumed with it, so a prompt is never shown against a later turn)."""
    at = parse_rfc3339(ts) if ts else None
    found: str | None = None
    while prompts and at is not None and (prompts[0][0] or at) <= at:
        found = prompts.pop(0)[1]
    return found


def build_report(workspace: Path, session_id: str) -> SessionReport:
    """Read the session's log once (and its artifacts) and gather everything the page shows."""
    report = SessionReport(summary=summarize(workspace, session_id))
    records = {r.first_seq: r for r in read_runs(workspace, session_id)}
    prompts = [(parse_rfc3339(p.ts), p.prompt) for p in read_prompts(workspace, session_id)]
    diffs = _DiffMatcher(read_diffs(workspace, session_id))
    call_ts: str | None = None  # when the latest tool call started (a diff's earliest time)
    segment = Segment(turn=None)
    entries_by_item: dict[str, Entry] = {}
    calls: dict[str, Entry] = {}  # tool_invocation item id -> its entry

    def close_segment() -> None:
        nonlocal segment
        if segment.turn is not None or segment.entries:
            report.segments.append(segment)
        segment = Segment(turn=None, run=len(report.runs) or 1)

    def current_run(ts: str | None) -> RunView:
        if not report.runs:  # the log's start was evicted: a run without its thread.started
            report.runs.append(RunView(number=1, first_seq=None, started=ts))
        return report.runs[-1]

    for env in read_session_events(workspace, session_id):
        ev = env.event
        report.first_seq = report.first_seq or env.seq
        report.last_seq = env.seq
        report.first_ts = report.first_ts or env.ts
        report.last_ts = env.ts or report.last_ts
        if isinstance(ev, ThreadStartedEvent):
            report.thread_id = ev.thread_id
            close_segment()
            report.runs.append(
                RunView(
                    number=len(report.runs) + 1,
                    first_seq=env.seq,
                    started=env.ts,
                    record=records.get(env.seq) if env.seq is not None else None,
                )
            )
            segment.run = len(report.runs)
            continue
        run = current_run(env.ts)
        run.ended = env.ts or run.ended
        if isinstance(ev, TurnStartedEvent):
            close_segment()
            turn = TurnView(number=len(report.turns) + 1, started=env.ts)
            turn.prompt = _take_prompt(prompts, env.ts)
            run.turns.append(turn)
            segment = Segment(turn=turn, run=run.number)
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
                    call_ts = env.ts
            entry.item = ev.item
            entry.state = item_state(ev.item, done)
            if isinstance(d, FileChangeItem) and done:
                for change in d.changes:
                    found = diffs.take(change.path, call_ts, env.ts)
                    if found is not None:
                        entry.diffs[change.path] = found
        elif isinstance(ev, ThreadCompactBoundaryEvent):
            segment.entries.append(Entry("compaction", env.seq, env.ts, event=encode_event(ev)))
        elif isinstance(ev, ContextResetEvent):
            segment.entries.append(Entry("reset", env.seq, env.ts, event=encode_event(ev)))
        elif isinstance(ev, ThreadErrorEvent):
            segment.entries.append(Entry("error", env.seq, env.ts, event=encode_event(ev)))
        elif isinstance(ev, ThreadCompletedEvent):
            report.completion = run.completion = ev
        elif isinstance(ev, UnknownEvent):
            report.unknown_events += 1
    close_segment()
    return report
