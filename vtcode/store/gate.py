"""One dispatch gate, write-ahead: an exporter sees an event only once the canonical log has it.

`emit` redacts the event (nothing downstream ever sees a credential, the log included), hands it
to the canonical `SessionWriter` and keeps it pending. The writer's drain reports, after each
write batch, the highest seq exporters may see: written (`turn`, `os` durability) or fsynced
(`event`). A dispatch thread then hands the pending events up to that seq to every exporter, in
order, batch by batch, so a `--json` consumer, an `--events` file or an OTel collector never
holds an event that a crash or a full disk kept out of `events.jsonl`. Interactive renderers
see an event one drain batch after it was emitted.

Shutdown order: the caller emits `thread.completed`; `close()` waits until the log has it, lets
the dispatch thread deliver it, finishes the exporters, then closes the canonical drain (fsync,
manifest); only after that may a run be reported successful.

Failure policy:
- canonical failure (`PersistenceError`: a full disk, a saturated queue, an oversized event):
  the gate writes the run's closing events itself into what the log can still take (the drain
  is healthy after a producer-side failure; after ENOSPC it writes into the released
  `store.reserve_bytes`): `turn.failed` if a written turn is open, then `thread.completed`
  (`error_during_execution`, the failure as `stop_reason`). Exporters get them once written,
  so stdout still ends with its terminal event; then the error propagates (exit 1).
- exporter failure (e.g. the `--events` disk is full): that exporter is disabled, the canonical
  log is untouched and keeps receiving every event, and `close()` raises `ExportError` (exit 1)
  after the canonical log was closed and fsynced. An explicit export that silently stopped would
  be worse than a failed run.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from vtcode.errors import ExportError, PersistenceError
from vtcode.events.enums import ThreadCompletionSubtype
from vtcode.events.types import (
    ThreadCompletedEvent,
    ThreadErrorEvent,
    ThreadEvent,
    ThreadStartedEvent,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    Usage,
)
from vtcode.redact import Redactor
from vtcode.store.writer import SessionWriter
from vtcode.threads import BackgroundThread

_PREFIX = "session event persistence failed: "  # SessionWriter's; the reason says it already
_WAIT = 30.0  # seconds a close waits for the drain before giving up on a stuck disk


@runtime_checkable
class Exporter(Protocol):
    """A secondary consumer of the event stream (compat `--events` file, derived views)."""

    def handle(self, event: ThreadEvent) -> None: ...

    def finish(self) -> None: ...


def exporter_name(exporter: Exporter) -> str:
    return str(getattr(exporter, "name", type(exporter).__name__))


class _Written:
    """What the written part of this run says: enough to close it truthfully."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.any = False
        self.turn_open = False
        self.turns = 0
        self.usage = Usage()
        self.completed = False

    def see(self, event: ThreadEvent) -> None:
        self.any = True
        if isinstance(event, ThreadStartedEvent):
            self.thread_id = event.thread_id
        elif isinstance(event, TurnStartedEvent):
            self.turn_open = True
            self.turns += 1
        elif isinstance(event, TurnCompletedEvent | TurnFailedEvent):
            self.turn_open = False
            if event.usage is not None:
                self.usage = self.usage.add(event.usage)
        elif isinstance(event, ThreadCompletedEvent):
            self.completed = True

    def closing(self, session_id: str, reason: str) -> tuple[ThreadEvent, ...]:
        # Not even `thread.started` reached the log (the disk filled before the first line):
        # the log still opens the thread it closes, or it would end as an empty file.
        out: list[ThreadEvent] = [] if self.any else [ThreadStartedEvent(thread_id=self.thread_id)]
        # As the runner ends any run its harness failed: the why in a thread-level `error`
        # event (and the open turn's `turn.failed`), `stop_reason` the code `error`, never prose
        # (`vtcode.loop.outcomes.stop_reason_of`), so consumers see one shape for every failure.
        out.append(ThreadErrorEvent(message=reason))
        if self.turn_open:
            out.append(TurnFailedEvent(message=reason))
        out.append(
            ThreadCompletedEvent(
                thread_id=self.thread_id,
                session_id=session_id,
                subtype=ThreadCompletionSubtype.ERROR_DURING_EXECUTION,
                outcome_code="error",
                stop_reason="error",
                usage=self.usage,
                num_turns=self.turns,
            )
        )
        return tuple(out)


class DispatchGate:
    """Feeds the canonical `SessionWriter`; exporters get what it wrote, in one order."""

    def __init__(
        self,
        canonical: SessionWriter,
        exporters: Sequence[Exporter] = (),
        redactor: Redactor | None = None,
    ) -> None:
        self.canonical = canonical
        # Secrets are collected once per run, from the environment the run started with.
        self._redactor = redactor if redactor is not None else Redactor.from_environ()
        self._exporters = list(exporters)
        self._failed: dict[int, str] = {}
        self._mutex = threading.Lock()  # serialises emit/close: one order for everyone
        self._cv = threading.Condition()  # guards the pending queue and the dispatch cursor
        self._pending: deque[tuple[int, ThreadEvent]] = deque()
        self._ready = 0  # exporters may see every pending seq <= this
        self._delivered = 0
        self._busy = False
        self._stop = False
        self._written = _Written(canonical.session_id)
        self._ended = False  # closing events written (or impossible): emit refuses more
        self._closed = False
        canonical.on_written = self._on_written
        self._thread = BackgroundThread(
            target=self._dispatch, name=f"vtcode-dispatch-{canonical.session_id}", daemon=True
        )
        self._thread.start()

    @property
    def export_errors(self) -> list[str]:
        """One message per exporter that failed so far."""
        return list(self._failed.values())

    def emit(self, event: ThreadEvent) -> None:
        """Hand one event to the canonical log; exporters see it once it is written.

        Raises `PersistenceError` when the canonical failed (after writing the closing events
        it still could).
        """
        event = self._redactor.event(event)  # before the canonical write: nothing sees a secret
        with self._mutex:
            if isinstance(event, ThreadStartedEvent):  # the thread a closing must name
                self._written.thread_id = event.thread_id
            try:
                seq = self.canonical.submit(event)
            except PersistenceError:
                self._end_after_failure()
                raise
            with self._cv:
                self._pending.append((seq, event))
                # The drain may have written it (and raised `_ready` past it) before it was
                # pending: the dispatch thread then sleeps on a condition already true, and
                # nothing else may come to wake it (a chat waiting for its next line).
                if seq <= self._ready:
                    self._cv.notify_all()

    def settle(self) -> None:
        """Return once every event emitted so far is written and shown to the exporters.

        Exporters run on the dispatch thread, one drain batch behind `emit`. An interactive front
        end calls this before it prompts, so the screen shows the whole turn before the prompt
        (and a permission question comes after the `[tool]` line it is about). Never raises.
        """
        if self._closed or self.canonical.failed:
            return
        try:
            last = self.canonical.wait_written(_WAIT)
        except PersistenceError:
            return
        with self._cv:
            target = min(last, self._ready)
        self._wait_delivered(target)

    def close(self) -> None:
        """Deliver what was written, finish exporters, close the canonical drain (fsync);
        raise on any failure."""
        with self._mutex:
            if self._closed:
                return
            if not self.canonical.failed:
                with contextlib.suppress(PersistenceError):
                    self.canonical.wait_written(_WAIT)
            if self.canonical.error is not None:  # the last events may have hit it
                self._end_after_failure()
            self._closed = True
            self._stop_dispatch()
            self._finish_exporters()
        self.canonical.close()  # raises PersistenceError: the more serious failure wins
        if self._failed:
            raise ExportError(
                "export failed: " + "; ".join(self._failed.values()),
                hint="the canonical session log is complete; `vtcode sessions export` can "
                "regenerate any export from it",
            )

    def abort(self) -> None:
        """Best effort after a failure: close what can be closed truthfully, never raise."""
        with self._mutex:
            if not self._closed:
                self._closed = True
                try:
                    if self.canonical.failed:
                        self._end_after_failure()
                    else:
                        self.canonical.wait_written(_WAIT)
                except Exception:  # noqa: S110 - abort never raises
                    pass
                self._stop_dispatch()
                self._finish_exporters()
        self.canonical.abort()

    # ------------------------------------------------------------------------------------
    # failure: close the run in the log, then let exporters see it

    def _end_after_failure(self) -> None:
        """Once per run: the closing events into the log (if it can take them), then out."""
        if self._ended:
            return
        self._ended = True
        w = self.canonical
        try:
            last = w.wait_written(_WAIT)  # everything the drain will ever write before closing
        except PersistenceError:
            return
        self._wait_delivered(last)
        with self._cv:
            self._pending.clear()  # accepted but never written: no exporter may see them
        tracker = self._written
        if tracker.completed:
            return
        err = w.error
        detail = "" if err is None else err.message.removeprefix(_PREFIX)
        reason = "the session log could not be written" + (f": {detail}" if detail else "")
        written = w.write_closing(tracker.closing(w.session_id, reason), _WAIT)
        with self._cv:
            self._pending.extend(written)
            self._ready = max(self._ready, written[-1][0] if written else 0)
            self._cv.notify_all()
        if written:
            self._wait_delivered(written[-1][0])

    # ------------------------------------------------------------------------------------
    # the dispatch thread

    def _on_written(self, seq: int) -> None:
        """Called by the drain after each batch (write-ahead: exporters follow the log)."""
        with self._cv:
            if seq > self._ready:
                self._ready = seq
                self._cv.notify_all()

    def _wait_delivered(self, seq: int) -> None:
        with self._cv:
            self._cv.wait_for(lambda: self._delivered >= seq or not self._deliverable(), _WAIT)

    def _deliverable(self) -> bool:
        """Something is being delivered or could be now (call under `_cv`)."""
        return self._busy or (bool(self._pending) and self._pending[0][0] <= self._ready)

    def _stop_dispatch(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        self._thread.join(_WAIT)

    def _dispatch(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(
                    lambda: (
                        self._stop or (bool(self._pending) and self._pending[0][0] <= self._ready)
                    )
                )
                batch: list[tuple[int, ThreadEvent]] = []
                while self._pending and self._pending[0][0] <= self._ready:
                    batch.append(self._pending.popleft())
                if not batch and self._stop:
                    return
                self._busy = True
            for _seq, event in batch:
                self._written.see(event)
                self._deliver(event)
            with self._cv:
                if batch:
                    self._delivered = batch[-1][0]
                self._busy = False
                self._cv.notify_all()

    def _deliver(self, event: ThreadEvent) -> None:
        for i, ex in enumerate(self._exporters):
            if i in self._failed:
                continue
            try:
                ex.handle(event)
            except Exception as e:
                self._failed[i] = f"{exporter_name(ex)}: {e}"

    def _finish_exporters(self) -> None:
        for i, ex in enumerate(self._exporters):
            if i in self._failed:
                continue
            try:
                ex.finish()
            except Exception as e:
                self._failed[i] = f"{exporter_name(ex)}: {e}"
