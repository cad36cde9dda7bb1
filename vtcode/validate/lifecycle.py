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
from typing import Any

from vtcode.validate.report import ProblemCode, Severity

__all__ = ["Emit", "Lifecycle"]

# (line, pointer, code, severity, message, value)
Emit = Callable[[int, str, ProblemCode, Severity, str, Any], None]

_E = Severity.ERROR
_W = Severity.WARNING
_ITEM_EVENTS = frozenset({"item.started", "item.updated", "item.completed"})
_TURN_ENDS = frozenset({"turn.completed", "turn.failed"})
_OPEN_ITEMS_LISTED = 5


def _q(text: object) -> str:
    """Quote a value from the log for a message: escaped (no terminal control codes), clipped."""
    r = repr(text)
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

    def _next_run(self, line: int, event: dict[str, Any]) -> None:
        """A resume: per-run state starts afresh; the thread id must stay the same."""
        self.completed_line = 0
        self.started_line = line
        self.items.clear()
        self.open_types.clear()
        self.invocations.clear()
        tid = event.get("thread_id")
        if self.thread_id is not None and isinstance(tid, str) and tid != self.thread_id:
            self._emit(
                line,
                self._ev + "/thread_id",
                ProblemCode.THREAD_ID_MISMATCH,
                _W,
                f"resumed run's thread_id {_q(tid)} differs from {_q(self.thread_id)}",
                tid,
            )

    def feed(self, line: int, etype: str, event: dict[str, Any]) -> None:
        emit = self._emit
        if self.completed_line:
            if etype == "thread.started":
                self._next_run(line, event)
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
            self._item(line, etype, event)
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
                emit(
                    line,
                    self._ev + "/type",
                    ProblemCode.DUPLICATE_THREAD_STARTED,
                    _E,
                    f"a second thread.started (the first is at line {self.started_line})",
                    None,
                )
            else:
                self.started_line = line
                tid = event.get("thread_id")
                self.thread_id = tid if isinstance(tid, str) else None
                return
        elif etype == "thread.completed":
            self._thread_completed(line)
        if self.thread_id is not None and "thread_id" in event:
            tid = event["thread_id"]
            if tid != self.thread_id and isinstance(tid, str):
                emit(
                    line,
                    self._ev + "/thread_id",
                    ProblemCode.THREAD_ID_MISMATCH,
                    _W,
                    f"thread_id {_q(tid)} differs from {_q(self.thread_id)} of thread.started",
                    tid,
                )

    def _item(self, line: int, etype: str, event: dict[str, Any]) -> None:
        item = event.get("item")
        if type(item) is not dict:
            return
        iid = item.get("id")
        if type(iid) is not str:
            return
        itype = item.get("type")
        ptr = self._ev + "/item/id"
        state = self.items.get(iid)
        emit = self._emit
        if state is None:
            if etype == "item.updated":
                emit(
                    line,
                    ptr,
                    ProblemCode.ITEM_NOT_STARTED,
                    _E,
                    f"item.updated for item {_q(iid)}, which was never started",
                    iid,
                )
            elif etype == "item.started":
                self.items[iid] = line
                self.open_types[iid] = itype
            else:
                self.items[iid] = -line
            if itype == "tool_invocation":
                self.invocations.add(iid)
            elif itype == "tool_output":
                self._call_id(line, item)
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

    def _call_id(self, line: int, item: dict[str, Any]) -> None:
        call_id = item.get("call_id")
        if isinstance(call_id, str) and call_id not in self.invocations:
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
