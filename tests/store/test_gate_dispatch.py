"""The dispatch gate delivers every written event without a later emit to push it out.

A chat (`exec --input-format stream-json`, the interactive front end) emits `turn.completed`
and then waits for its next line: nothing else is emitted until the user answers, so the turn's
last event must reach the exporters (stdout) on its own. The drain can write an event and
report it before `emit` has queued it for dispatch; the gate must still deliver it. CI saw
this once in ~3,700 tests as a streamed turn whose `turn.completed` never reached stdout
(4 in 90 tries of the same test under load). Here that interleaving is forced every time with
the real writer: `submit` returns only after the drain wrote the event.
"""

from __future__ import annotations

import threading
from pathlib import Path

from vtcode.config.model import StoreConfig
from vtcode.events.types import (
    ThreadEvent,
    ThreadStartedEvent,
    TurnCompletedEvent,
    TurnStartedEvent,
    Usage,
)
from vtcode.store import DispatchGate, SessionWriter


class _WrittenBeforeSubmitReturns(SessionWriter):
    """The real writer, slowed at one point: `submit` waits until the drain wrote the event."""

    def submit(self, event: ThreadEvent) -> int:
        seq = super().submit(event)
        self.wait_written(30)
        return seq


class _Collect:
    def __init__(self, want: int) -> None:
        self.seen: list[str] = []
        self.want = want
        self.all_seen = threading.Event()

    def handle(self, event: ThreadEvent) -> None:
        self.seen.append(event.TYPE)
        if len(self.seen) >= self.want:
            self.all_seen.set()

    def finish(self) -> None:
        pass


def _gate(tmp_path: Path, sid: str, want: int) -> tuple[DispatchGate, _Collect]:
    writer = _WrittenBeforeSubmitReturns.create(tmp_path, sid, StoreConfig())
    sink = _Collect(want)
    gate = DispatchGate(writer, [sink])
    gate.emit(ThreadStartedEvent(thread_id=sid))
    gate.emit(TurnStartedEvent())
    return gate, sink


def test_an_event_written_before_it_was_queued_is_still_delivered(tmp_path: Path) -> None:
    gate, sink = _gate(tmp_path, "s1", want=3)
    try:
        gate.emit(TurnCompletedEvent(usage=Usage()))
        # No further emit and no settle: the exporter gets all three on its own (bounded wait;
        # before the fix it waited forever).
        assert sink.all_seen.wait(20), f"delivered only {sink.seen}"
        assert sink.seen == ["thread.started", "turn.started", "turn.completed"]
    finally:
        gate.abort()


def test_settle_returns_with_the_last_event_delivered(tmp_path: Path) -> None:
    gate, sink = _gate(tmp_path, "s2", want=2)
    try:
        gate.settle()  # what a chat calls before it reads the next line
        assert sink.seen == ["thread.started", "turn.started"]
    finally:
        gate.abort()
