"""What `sessions repair` does between dropping bad lines and writing the log back.

Dropping a line can leave the lines around it out of order for the contract (`vtcode validate`):
a lost `turn.completed` leaves a turn open when the next one starts, a lost `item.started` leaves
updates of an item never started, a lost `thread.started` leaves a run without a start. So the
kept events are replayed here, in order, with the rules `vtcode.validate.lifecycle` checks, and:

- a line that is only *encoded* wrong is salvaged, not dropped (`salvage`): a UTF-8 byte order
  mark, NULs a crash left, a `\\r` before the newline, bytes that are not UTF-8 (replaced by
  U+FFFD); each salvage is reported;
- what a lost line left open is closed where the log moves on, with the events a crash recovery
  appends (`store.closeout.closing_events`: item completions with their last snapshot, a
  `harness` item, `turn.failed`, `thread.completed` of an interrupted run), inserted before the
  event that needs it closed (a second `turn.started`, a `thread.started`, `thread.completed`);
- a run whose `thread.started` was lost gets one back (the thread id of the log, else the
  session id), followed by a `harness` item saying so;
- the first `item.updated` of an item whose `item.started` was lost becomes its `item.started`;
- what cannot be placed (a turn end without a turn, an event for an item already completed, a
  second start of an open item, a `tool_output` naming a lost `tool_invocation`, an event that
  does not decode) goes to the quarantine file with the reason, like a bad line.

An interrupted last run is left to `close_interrupted`, as on every reopen.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from vtcode.clock import rfc3339
from vtcode.events.codec import decode_event, encode_wrapped_line
from vtcode.events.enums import HarnessEventKind
from vtcode.events.types import (
    HarnessItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ThreadItem,
    ThreadStartedEvent,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
)
from vtcode.jsontypes import DecodeError
from vtcode.store.closeout import OpenRun, apply_to_run, closing_events

__all__ = ["Kept", "Replay", "next_item_number", "salvage"]

_BOM = b"\xef\xbb\xbf"
LOST_START = (
    "sessions repair: this run's thread.started was lost (a corrupt line); "
    "vtcode wrote it again so the run can be read"
)


def salvage(raw: bytes) -> tuple[bytes, list[str]]:
    """`raw` with encoding damage undone, and what was undone (empty when nothing was)."""
    fixes: list[str] = []
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
        fixes.append("removed a UTF-8 byte order mark")
    if raw.endswith(b"\r"):
        raw = raw.rstrip(b"\r")
        fixes.append("removed a carriage return")
    if b"\0" in raw:
        raw = raw.replace(b"\0", b"")
        fixes.append("removed NUL bytes")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raw = raw.decode("utf-8", "replace").encode("utf-8")
        fixes.append("replaced bytes that are not UTF-8 with U+FFFD")
    return raw, fixes


@dataclasses.dataclass(slots=True)
class Kept:
    """One line of the repaired log: its original line number (0 when inserted) and object."""

    line: int
    obj: dict[str, Any]


@dataclasses.dataclass(slots=True)
class Replay:
    """Replays kept lines (`feed`), producing `out`, `inserted`, `rewritten` and `refused`."""

    session_id: str
    next_item: int  # the first `item_<n>` no line of the session uses
    out: list[Kept] = dataclasses.field(default_factory=list)
    inserted: int = 0
    rewritten: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    refused: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    run: OpenRun | None = None
    thread_id: str | None = None
    runs: int = 0
    done: set[str] = dataclasses.field(default_factory=set)  # completed item ids (this run)
    invocations: set[str] = dataclasses.field(default_factory=set)

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        try:
            event = decode_event(obj["event"], "/event")
        except (DecodeError, RecursionError) as e:
            self.refused.append((line, f"event does not decode ({e})"))
            return
        reason = self._place(line, obj, event)
        if reason is not None:
            self.refused.append((line, reason))

    def _place(self, line: int, obj: dict[str, Any], ev: ThreadEvent) -> str | None:
        if self.run is None:
            if isinstance(ev, ThreadStartedEvent):
                self._start_run(ev.thread_id)
                self._keep(obj, ev, line)
                return None
            if isinstance(ev, ThreadCompactBoundaryEvent) and self.runs:
                self._keep(obj, ev, line)
                return None
            tid = getattr(ev, "thread_id", None)
            self._lost_start(line, tid if isinstance(tid, str) else None)
        run = self.run
        assert run is not None
        if isinstance(ev, ThreadStartedEvent):
            self._close(run, line, "the next run starts", whole=True)
            self._start_run(ev.thread_id)
        elif isinstance(ev, TurnStartedEvent) and run.turn_open:
            self._close(run, line, "the next turn starts", whole=False)
        elif isinstance(ev, TurnCompletedEvent | TurnFailedEvent) and not run.turn_open:
            return f"{ev.TYPE} without an open turn (its turn.started was lost)"
        elif isinstance(ev, ThreadCompletedEvent):
            if run.turn_open or run.open_items:
                self._close(run, line, "the run completes", whole=False)
            self._keep(obj, ev, line)
            self.run = None
            return None
        elif isinstance(ev, ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent):
            return self._item(line, obj, ev, run)
        self._keep(obj, ev, line)
        return None

    def _item(
        self,
        line: int,
        obj: dict[str, Any],
        ev: ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent,
        run: OpenRun,
    ) -> str | None:
        iid = ev.item.id
        details = ev.item.details
        if iid in self.done:
            return f"{ev.TYPE} for item {iid!r} after its item.completed"
        opened = run.open_items.get(iid)
        if opened is not None:
            if isinstance(ev, ItemStartedEvent):
                return f"item {iid!r} was already started"
            if type(opened.details) is not type(details):
                return f"item {iid!r} changed its type"
        if isinstance(details, ToolOutputItem) and details.call_id not in self.invocations:
            return f"tool_output names call_id {details.call_id!r}, whose tool_invocation was lost"
        if opened is None and isinstance(ev, ItemUpdatedEvent):
            ev = ItemStartedEvent(item=ev.item)
            obj = {**obj, "event": {**obj["event"], "type": ev.TYPE}}
            self.rewritten.append((line, "item.updated became item.started (item.started lost)"))
        if type(details).__name__ == "ToolInvocationItem":
            self.invocations.add(iid)
        if isinstance(ev, ItemCompletedEvent):
            self.done.add(iid)
        self._keep(obj, ev, line)
        return None

    def _keep(self, obj: dict[str, Any], ev: ThreadEvent, line: int) -> None:
        if self.run is not None:
            apply_to_run(self.run, ev)
        self.out.append(Kept(line, obj))

    def _start_run(self, thread_id: str) -> None:
        self.thread_id = self.thread_id or thread_id
        self.run = OpenRun(thread_id=thread_id)
        self.runs += 1
        self.done.clear()
        self.invocations.clear()

    def _insert(self, ev: ThreadEvent) -> None:
        obj = orjson.loads(encode_wrapped_line(ev, seq=1, ts=rfc3339()))
        if self.run is not None:
            apply_to_run(self.run, ev)
        self.out.append(Kept(0, obj))
        self.inserted += 1

    def _lost_start(self, line: int, thread_id: str | None) -> None:
        tid = self.thread_id or thread_id or self.session_id
        self._start_run(tid)
        self._insert(ThreadStartedEvent(thread_id=tid))
        self._insert(self._harness(LOST_START))
        self.rewritten.append((line, "thread.started written again before this line"))

    def _harness(self, message: str) -> ItemCompletedEvent:
        iid = f"item_{self.next_item}"
        self.next_item += 1
        details = HarnessItem(event=HarnessEventKind.ERROR_RECOVERED, message=message)
        return ItemCompletedEvent(item=ThreadItem(id=iid, details=details))

    def _close(self, run: OpenRun, line: int, why: str, *, whole: bool) -> None:
        """Close what `run` left open before `line`: its items and turn, and the run itself
        when `whole` (the events of `closing_events`, with a fresh harness item id)."""
        run.next_item = self.next_item
        self.next_item += 1
        events = closing_events(run, self.session_id)
        if not whole:
            events = events[:-1]  # keep the run open: only its items and turn end here
        for ev in events:
            if isinstance(ev, ItemCompletedEvent):
                self.done.add(ev.item.id)
            self._insert(ev)
        what = "the run" if whole else "open items and turn"
        self.rewritten.append((line, f"closed {what} left open by a lost line ({why})"))
        if whole:
            self.run = None


def next_item_number(objs: list[dict[str, Any]]) -> int:
    """The first `item_<n>` number after every one the lines use."""
    top = -1
    for obj in objs:
        item = obj.get("event", {}).get("item")
        iid = item.get("id") if isinstance(item, dict) else None
        if isinstance(iid, str) and iid.startswith("item_") and iid[5:].isdigit():
            top = max(top, int(iid[5:]))
    return top + 1
