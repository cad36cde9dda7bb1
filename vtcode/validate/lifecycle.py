"""The sequence rules of a ThreadEvent log, checked in one pass with per-id state only.

Rules (reference §1.4 and the agent-loop contract): `thread.started` first; exactly one
`thread.completed`, last, per run. A canonical log of a resumed session holds several runs, each
`thread.started` ... `thread.completed` (upstream's `exec resume` appends a new run, restarting
its item ids), so a `thread.started` right after a `thread.completed` opens the next run, and a
`thread.compact_boundary` may stand between runs (`vtcode compact`, offline). Turns
are balanced and never nested; `item.updated`/`item.completed` only for a started item (a lone
`item.completed` is a non-streamed item) and nothing for an item after its completion;
`tool_output.call_id` names an earlier `tool_invocation` item. Memory grows only with the number
of distinct item ids, whatever the length of the log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vtcode.validate.report import ProblemCode, Severity

__all__ = ["Boundary", "Emit", "Lifecycle", "SpeculativeLifecycle"]

# (line, pointer, code, severity, message, value)
Emit = Callable[[int, str, ProblemCode, Severity, str, Any], None]

_E = Severity.ERROR
_W = Severity.WARNING
_ITEM_EVENTS = frozenset({"item.started", "item.updated", "item.completed"})
_TURN_ENDS = frozenset({"turn.completed", "turn.failed"})
_OPEN_ITEMS_LISTED = 5


def _q(text: object) -> str:
    """Quote a value from the log for a message: escaped (no terminal control codes), clipped."""
    if isinstance(text, str):
        r = repr(text)
    else:  # JSON's words (`null`, `true`), never Python's (`None`, `True`)
        from vtcode.validate.schemacheck import json_text

        r = json_text(text)
    return r if len(r) <= 80 else r[:79] + "…"


class Lifecycle:
    """Feed events in order with `feed`, then call `finish` once at the end of the log."""

    def __init__(self, emit: Emit, *, partial: bool, event_pointer: str) -> None:
        self._emit = emit
        self._partial = partial
        self._ev = event_pointer  # "" for raw lines, "/event" for wrapped ones
        self.seen_any = False
        self.started_line = 0
        self.completed_line = 0
        self.thread_id: str | None = None
        self.turn_line = 0  # line of the open turn's `turn.started` (0 = no open turn)
        # item id -> line of its item.started (> 0, still open) or -line of its completion
        self.items: dict[str, int] = {}
        self.open_types: dict[str, Any] = {}
        self.invocations: set[str] = set()

    def _next_run(self, line: int, tid: str | None) -> None:
        """A resume: per-run state starts afresh; the thread id must stay the same."""
        self.completed_line = 0
        self.started_line = line
        self.items.clear()
        self.open_types.clear()
        self.invocations.clear()
        if tid is not None:
            self._check_thread_id(line, tid, resumed=True)

    def _check_thread_id(self, line: int, tid: str, *, resumed: bool) -> None:
        """Every event that names a thread names the thread of the first thread.started."""
        if self.thread_id is None or tid == self.thread_id:
            return
        if resumed:
            message = f"resumed run's thread_id {_q(tid)} differs from {_q(self.thread_id)}"
        else:
            message = f"thread_id {_q(tid)} differs from {_q(self.thread_id)} of thread.started"
        self._emit(line, self._ev + "/thread_id", ProblemCode.THREAD_ID_MISMATCH, _W, message, tid)

    def _second_start(self, line: int) -> None:
        self._emit(
            line,
            self._ev + "/type",
            ProblemCode.DUPLICATE_THREAD_STARTED,
            _E,
            f"a second thread.started (the first is at line {self.started_line})",
            None,
        )

    def _not_started(self, line: int, iid: str) -> None:
        self._emit(
            line,
            self._ev + "/item/id",
            ProblemCode.ITEM_NOT_STARTED,
            _E,
            f"item.updated for item {_q(iid)}, which was never started",
            iid,
        )

    def feed_event(self, line: int, etype: str, event: dict[str, Any]) -> None:
        """`feed` with the facts taken from a decoded JSON object (the exact path)."""
        tid = event.get("thread_id")
        item = event.get("item")
        iid = item.get("id") if type(item) is dict else None
        if type(iid) is not str:
            self.feed(line, etype, tid if type(tid) is str else None)
            return
        assert type(item) is dict
        call_id = item.get("call_id")
        self.feed(
            line,
            etype,
            tid if type(tid) is str else None,
            iid,
            item.get("type"),
            call_id if type(call_id) is str else None,
        )

    def feed(
        self,
        line: int,
        etype: str,
        tid: str | None,
        iid: str | None = None,
        itype: object = None,
        call_id: str | None = None,
    ) -> None:
        """One event, as the facts the rules need: its type, its `thread_id` (None when absent
        or not a string) and, for an item event, the item's id, type and `call_id`."""
        emit = self._emit
        if self.completed_line:
            if etype == "thread.started":
                self._next_run(line, tid)
                return
            if etype == "thread.compact_boundary":
                return  # `vtcode compact` between runs: an offline, manual compaction
            if etype == "thread.completed":
                emit(
                    line,
                    self._ev + "/type",
                    ProblemCode.DUPLICATE_THREAD_COMPLETED,
                    _E,
                    f"a second thread.completed (the first is at line {self.completed_line})",
                    None,
                )
            else:
                emit(
                    line,
                    self._ev + "/type",
                    ProblemCode.AFTER_THREAD_COMPLETED,
                    _E,
                    f"{_q(etype)} after thread.completed (line {self.completed_line}); "
                    "thread.completed must be last",
                    etype,
                )
            return
        if not self.seen_any:
            self.seen_any = True
            if etype != "thread.started":
                emit(
                    line,
                    self._ev + "/type",
                    ProblemCode.NOT_STARTED_FIRST,
                    _E,
                    f"the first event is {_q(etype)}, not thread.started",
                    etype,
                )
        if etype in _ITEM_EVENTS:
            if iid is not None:
                self._item(line, etype, iid, itype, call_id)
        elif etype == "turn.started":
            if self.turn_line:
                emit(
                    line,
                    self._ev + "/type",
                    ProblemCode.NESTED_TURN,
                    _E,
                    f"turn.started while the turn started at line {self.turn_line} is open",
                    None,
                )
            else:
                self.turn_line = line
        elif etype in _TURN_ENDS:
            if self.turn_line:
                self.turn_line = 0
            else:
                emit(
                    line,
                    self._ev + "/type",
                    ProblemCode.TURN_NOT_STARTED,
                    _E,
                    f"{etype} without an open turn (no turn.started before it)",
                    None,
                )
        elif etype == "thread.started":
            if self.started_line:
                self._second_start(line)
            else:
                self.started_line = line
                self.thread_id = tid
                return
        elif etype == "thread.completed":
            self._thread_completed(line)
        if tid is not None:
            self._check_thread_id(line, tid, resumed=False)

    def item(self, line: int, etype: str, iid: str, itype: str, call_id: str | None) -> None:
        """`feed` for an item event of a line the screen proved valid: the same rules, with the
        two common cases (a new item starts; an open item is updated or completed) inline."""
        if self.completed_line or not self.seen_any:
            self.feed(line, etype, None, iid, itype, call_id)
            return
        items = self.items
        state = items.get(iid)
        if state is None:
            if etype == "item.started" and itype != "tool_output":
                items[iid] = line
                self.open_types[iid] = itype
                if itype == "tool_invocation":
                    self.invocations.add(iid)
                return
        elif state > 0 and etype != "item.started" and self.open_types[iid] == itype:
            if etype == "item.completed":
                items[iid] = -line
                del self.open_types[iid]
            return
        self._item(line, etype, iid, itype, call_id)

    def _item(self, line: int, etype: str, iid: str, itype: object, call_id: str | None) -> None:
        ptr = self._ev + "/item/id"
        state = self.items.get(iid)
        emit = self._emit
        if state is None:
            if etype == "item.updated":
                self._not_started(line, iid)
            elif etype == "item.started":
                self.items[iid] = line
                self.open_types[iid] = itype
            else:
                self.items[iid] = -line
            if itype == "tool_invocation":
                self.invocations.add(iid)
            elif itype == "tool_output" and call_id is not None:
                self._call_id(line, call_id)
        elif state < 0:
            emit(
                line,
                ptr,
                ProblemCode.ITEM_AFTER_COMPLETED,
                _E,
                f"{etype} for item {_q(iid)} after its item.completed at line {-state}",
                iid,
            )
        elif etype == "item.started":
            emit(
                line,
                ptr,
                ProblemCode.DUPLICATE_ITEM_STARTED,
                _E,
                f"item {_q(iid)} was already started at line {state}",
                iid,
            )
        else:
            first = self.open_types[iid]
            if itype != first:
                emit(
                    line,
                    self._ev + "/item/type",
                    ProblemCode.ITEM_TYPE_CHANGED,
                    _E,
                    f"item {_q(iid)} started as {_q(first)} at line {state}, now {_q(itype)}",
                    itype if isinstance(itype, str) else None,
                )
            if etype == "item.completed":
                self.items[iid] = -line
                del self.open_types[iid]

    def _call_id(self, line: int, call_id: str) -> None:
        if call_id not in self.invocations:
            self._emit(
                line,
                self._ev + "/item/call_id",
                ProblemCode.UNKNOWN_CALL_ID,
                _E,
                f"tool_output names call_id {_q(call_id)}, but no tool_invocation item "
                "with that id came before",
                call_id,
            )

    def _thread_completed(self, line: int) -> None:
        self.completed_line = line
        if self.turn_line:
            self._emit(
                line,
                self._ev + "/type",
                ProblemCode.UNCLOSED_TURN,
                _E,
                f"thread.completed while the turn started at line {self.turn_line} is open "
                "(end it with turn.completed or turn.failed first)",
                None,
            )
            self.turn_line = 0
        self._open_items(line, "at thread.completed")

    def _open_items(self, line: int, where: str) -> None:
        if not self.open_types:
            return
        ids = list(self.open_types)
        shown = ", ".join(_q(i) for i in ids[:_OPEN_ITEMS_LISTED])
        more = len(ids) - _OPEN_ITEMS_LISTED
        suffix = f" and {more} more" if more > 0 else ""
        self._emit(
            line,
            "",
            ProblemCode.ITEM_NOT_COMPLETED,
            _W,
            f"{len(ids)} item(s) started but never completed {where}: {shown}{suffix}",
            None,
        )

    def join(self, boundary: Boundary, emit: Emit) -> bool:
        """Take over after a range checked by `SpeculativeLifecycle` from this state's end.

        False when the range's assumption does not hold here (nothing is changed then: the
        caller validates the file in one pass). Otherwise the boundary's deferred checks are
        made through `emit`, in line order, and this state becomes the state at the end of the
        range (for `finish`).
        """
        if (
            boundary.inexact
            or not self.seen_any
            or self.completed_line
            or self.turn_line
            or (boundary.listed_open_items and self.open_types)
            or not boundary.first_seen.isdisjoint(self.items)
        ):
            return False
        deferred = sorted(
            [(line, call_id, None) for line, call_id in boundary.call_misses]
            + [(line, tid, resumed) for line, tid, resumed in boundary.thread_ids],
            key=lambda d: d[0],
        )
        own = self._emit
        self._emit = emit
        try:
            for line, value, resumed in deferred:
                if resumed is None:
                    self._call_id(line, value)
                else:
                    self._check_thread_id(line, value, resumed=resumed)
        finally:
            self._emit = own
        self.turn_line = boundary.turn_line
        self.completed_line = boundary.completed_line
        return True

    def finish(self, last_line: int) -> None:
        """End-of-log rules (skipped for `--partial`, where the log may still be growing)."""
        if self._partial or not self.seen_any:
            return
        if self.turn_line:
            self._emit(
                last_line,
                "",
                ProblemCode.UNCLOSED_TURN,
                _E,
                f"end of log: the turn started at line {self.turn_line} never ended",
                None,
            )
        if not self.completed_line:
            self._emit(
                last_line,
                "",
                ProblemCode.MISSING_THREAD_COMPLETED,
                _E,
                "end of log without thread.completed (use --partial for a live session)",
                None,
            )


@dataclass
class Boundary:
    """What the second half of a split file left open: the facts only the first half decides.

    Produced by `SpeculativeLifecycle` (the child process), consumed by `Lifecycle.join` (the
    parent, which holds the first half's final state). Small: ids and a few lines, no items map.
    """

    first_seen: set[str] = field(default_factory=set)  # item ids looked up before any resume
    call_misses: list[tuple[int, str]] = field(default_factory=list)  # (line, call_id)
    thread_ids: list[tuple[int, str, bool]] = field(default_factory=list)  # (line, tid, resumed)
    listed_open_items: bool = False  # a thread.completed listed open items before any resume
    inexact: bool = False  # a rule needed the first half's lines (a second thread.started)
    turn_line: int = 0
    completed_line: int = 0


class SpeculativeLifecycle(Lifecycle):
    """The rules for a range that starts mid-log, assuming the common state at its start.

    The assumption: a thread was started, no turn is open, no item id of this range was used
    before it, the thread has not completed. Every decision that could depend on the lines
    before is recorded in `boundary` instead (thread ids, call ids) or marks the assumption
    used (ids looked up); `Lifecycle.join` checks the assumption against the real state and the
    caller falls back to one sequential pass when it does not hold, so the result is exact.
    """

    def __init__(self, emit: Emit, *, partial: bool, event_pointer: str) -> None:
        super().__init__(emit, partial=partial, event_pointer=event_pointer)
        self.seen_any = True
        self.started_line = -1  # started before this range, at a line unknown here
        self.boundary = Boundary()
        self._resumed = False

    def _next_run(self, line: int, tid: str | None) -> None:
        if not self._resumed:
            self._resumed = True
            self.boundary.first_seen.update(self.items)
        super()._next_run(line, tid)

    def _check_thread_id(self, line: int, tid: str, *, resumed: bool) -> None:
        self.boundary.thread_ids.append((line, tid, resumed))

    def _second_start(self, line: int) -> None:
        self.boundary.inexact = True

    def _not_started(self, line: int, iid: str) -> None:
        if not self._resumed:
            self.boundary.first_seen.add(iid)
        super()._not_started(line, iid)

    def _call_id(self, line: int, call_id: str) -> None:
        if self._resumed or call_id in self.invocations:
            super()._call_id(line, call_id)
        else:
            self.boundary.call_misses.append((line, call_id))

    def _open_items(self, line: int, where: str) -> None:
        if not self._resumed:
            self.boundary.listed_open_items = True
        super()._open_items(line, where)

    def close(self) -> Boundary:
        """The boundary facts, once the range is done."""
        if not self._resumed:
            self.boundary.first_seen.update(self.items)
        self.boundary.turn_line = self.turn_line
        self.boundary.completed_line = self.completed_line
        return self.boundary
