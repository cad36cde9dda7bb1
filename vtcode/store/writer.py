"""The canonical sink: a bounded, non-blocking handoff to one blocking I/O drain thread.

`submit` encodes the event (assigning the next gapless `seq` and a `ts`), checks its size and the
queue budget (`store.queue_max_events` / `store.queue_max_bytes`) and hands it over; it never
blocks on I/O. The drain writes each event with one `write` as it arrives (so a killed process
loses nothing the drain wrote) and makes it durable per `store.durability`:

- `event`: every write is fsynced before the drain takes more work. Events that queued up while an
  fsync ran share the next fsync (group commit), so a burst cannot saturate the queue.
- `turn` (default): fsync at each turn boundary (`turn.completed`/`turn.failed`), at
  `thread.completed` and on close.
- `os`: never fsync (survives a killed process, not a power loss).

At each boundary the manifest and turn index are replaced atomically, after the fsync, so a
manifest never vouches for bytes that are not durable.

Event cap (`store.max_events`): past it, whole oldest closed turns are evicted at a boundary
(`writer_io.keep_tail` says how `seq` and turn numbers then read).

Write-ahead dispatch: after each batch the drain calls `on_written` with the highest seq that
exporters may see (written; with `event` durability, fsynced). On ENOSPC/EDQUOT the session's
reserve (`store.reserve_bytes`, see `reserve.py`) is released and only `write_closing` events
are written from then on, so a run on a full disk still ends with `thread.completed`.

Saturation, an oversized event, an encoding error or an I/O error fails closed: the writer is
marked failed, `submit` and `close` raise `PersistenceError`, and every event accepted before
the failure is on disk. For producer-side failures the drain still writes and fsyncs everything
it accepted; after an I/O error nothing more can be, and an fsync error is never retried (the
fsyncgate lesson: the state since the last good fsync is unknown; the next open re-verifies).
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vtcode import fsutil
from vtcode.clock import rfc3339
from vtcode.config.model import Durability, StoreConfig
from vtcode.errors import PersistenceError
from vtcode.events.codec import encode_wrapped_line
from vtcode.events.types import ThreadEvent
from vtcode.store.cache_writer import CacheWriter
from vtcode.store.layout import EVENTS
from vtcode.store.logstate import run_summary
from vtcode.store.models import RunSummary
from vtcode.store.recovery import Recovery, cache_bytes
from vtcode.store.reserve import FULL_DISK, RESERVE, Reserve
from vtcode.store.writer_io import Control, etype, keep_tail
from vtcode.store.writer_open import Opened, open_append, open_new
from vtcode.threads import BackgroundThread

_MAX_BATCH = 4096
_IDLE_POLL = 0.25  # seconds between checks that the main thread is still alive


class SessionWriter:
    """The one writer of a session: holds its lock and owns the drain thread.

    Use `create` for a new session and `open_existing` to append to one (`exec resume`). Always
    end with `close()` (success path; raises `PersistenceError` if anything failed) or `abort()`
    (after a failure; never raises). Also a context manager: `close` on success, `abort` on error.
    """

    session_id: str
    path: Path
    events_path: Path
    recovery: Recovery | None

    def __init__(self, session_id: str, cfg: StoreConfig, opened: Opened) -> None:
        sdir, state = opened.sdir, opened.state
        self.session_id = session_id
        self.path = sdir
        self.events_path = sdir / EVENTS
        self.recovery = opened.recovery
        self.on_durable: Callable[[int], None] | None = None
        # Write-ahead dispatch: called by the drain after each batch with the highest seq that
        # exporters may now see (written; in `event` durability, fsynced).
        self.on_written: Callable[[int], None] | None = None
        self._cfg = cfg
        self._mode = cfg.durability
        self._max_event = cfg.max_event_bytes
        self._lock = opened.lock
        self._fd = opened.fd
        self._state = state
        self._next_seq = state.next_seq
        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._mutex = threading.Lock()
        self._pending_n = 0
        self._pending_b = 0
        self._error: PersistenceError | None = None
        self._io_failed = False
        self._closed = False
        self._released = False
        self._written_seq = state.last_seq
        self._durable_seq = state.last_seq
        self._durable_size = state.size
        self._durable_cv = threading.Condition()
        self._lost = 0
        self._stopped = False
        self._closing_only = False  # the disk filled up: only the closing events are written
        self._err_lock = threading.Lock()
        self._reserve = Reserve(sdir / RESERVE, cfg.reserve_bytes)
        self._cache = CacheWriter(
            sdir, f"vtcode-cache-{session_id}", lambda e: self._io_error("write the manifest", e)
        )
        self._thread = BackgroundThread(
            target=self._run, name=f"vtcode-drain-{session_id}", daemon=False
        )
        self._thread.start()

    @classmethod
    def create(cls, workspace: Path, session_id: str, cfg: StoreConfig) -> SessionWriter:
        """Create `<ws>/.vtcode/sessions/<id>/` and take its lock (exit 75 when busy)."""
        return cls(session_id, cfg, open_new(workspace, session_id, cfg))

    @classmethod
    def open_existing(cls, workspace: Path, session_id: str, cfg: StoreConfig) -> SessionWriter:
        """Open a session to append (resume): repairs a torn tail, refuses a corrupt log."""
        return cls(session_id, cfg, open_append(workspace, session_id, cfg))

    @property
    def closed(self) -> bool:
        """True once `close` or `abort` was called."""
        return self._closed

    @property
    def failed(self) -> bool:
        return self._error is not None

    @property
    def error(self) -> PersistenceError | None:
        return self._error

    @property
    def durable_seq(self) -> int:
        """The highest seq known to be fsynced (in `os` mode: only after `flush`)."""
        return self._durable_seq

    @property
    def durable_size(self) -> int:
        """Bytes of events.jsonl known to be fsynced (a line boundary)."""
        return self._durable_size

    @property
    def last_seq(self) -> int:
        """The seq of the last accepted event (0 when none)."""
        return self._next_seq - 1

    def submit(self, event: ThreadEvent) -> int:
        """Hand one event to the drain; returns its seq. Never blocks on I/O.

        Raises `PersistenceError` once the writer has failed (this call included when it is the
        one that saturates the queue, is oversized or cannot be encoded).
        """
        if self._error is not None:
            raise self._raise_copy()
        with self._mutex:
            if self._closed:
                raise PersistenceError(f"session {self.session_id} is closed; no more events")
            seq = self._next_seq
            ts = rfc3339()
            try:
                line = encode_wrapped_line(event, seq=seq, ts=ts)
            except (ValueError, TypeError, RecursionError, OverflowError) as e:
                raise self._fail(f"cannot encode a {etype(event)} event ({e})") from None
            size = len(line)
            if size > self._max_event:
                raise self._fail(
                    f"a {etype(event)} event is {size} bytes, over store.max_event_bytes "
                    f"({self._max_event})"
                )
            if (
                self._pending_n >= self._cfg.queue_max_events
                or self._pending_b + size > self._cfg.queue_max_bytes
            ):
                raise self._fail(
                    f"the drain queue is full ({self._pending_n} events, {self._pending_b} bytes; "
                    f"limits store.queue_max_events={self._cfg.queue_max_events}, "
                    f"store.queue_max_bytes={self._cfg.queue_max_bytes})"
                )
            self._next_seq = seq + 1
            self._pending_n += 1
            self._pending_b += size
            self._q.put((seq, line, etype(event), ts, run_summary(event, seq)))
        return seq

    def flush(self, timeout: float | None = 30.0) -> int:
        """Write and fsync everything accepted so far (any durability mode) and let the
        manifest catch up; returns the durable seq."""
        if self._error is not None:
            raise self._raise_copy()
        if self._closed:
            return self._durable_seq
        ctl = Control("flush")
        self._q.put(ctl)
        if not ctl.done.wait(timeout):
            raise PersistenceError(f"flushing session {self.session_id} timed out")
        if self._error is not None:
            raise self._raise_copy()
        return self._durable_seq

    def wait_written(self, timeout: float | None = 30.0) -> int:
        """Wait until every event accepted so far is written (not necessarily fsynced)."""
        if self._closed or self._io_failed or self._stopped:
            return self._written_seq
        ctl = Control("barrier")  # also after a producer-side failure: the drain still writes
        self._q.put(ctl)
        if not ctl.done.wait(timeout):
            raise PersistenceError(f"waiting for session {self.session_id} timed out")
        return self._written_seq

    def wait_durable(self, seq: int, timeout: float | None = None) -> bool:
        """Block until `seq` is fsynced (True), the writer fails or the timeout passes (False).

        A full disk (closing-only mode) is a failure here too: from then on only the closing
        events are written, so waiting for any other seq could only end at the timeout.
        """
        with self._durable_cv:
            return self._durable_cv.wait_for(
                lambda: (
                    self._durable_seq >= seq
                    or self._io_failed
                    or self._closing_only
                    or self._stopped
                ),
                timeout,
            ) and (self._durable_seq >= seq)

    def write_closing(
        self, events: tuple[ThreadEvent, ...], timeout: float | None = 30.0
    ) -> list[tuple[int, ThreadEvent]]:
        """After a failure, write the run's closing events (fsynced); returns what was written.

        Used by the dispatch gate so a failed run still ends with `thread.completed`: after a
        producer-side failure the drain is healthy, after ENOSPC it writes into the released
        reserve. Empty when nothing can be written any more (I/O failure, closed, stopped).
        """
        if self._closed or self._io_failed or self._stopped or not events:
            return []
        ctl = Control("closing", events)
        self._q.put(ctl)
        if not ctl.done.wait(timeout):
            return []
        return ctl.written

    def record_sandbox(self, record: dict[str, Any]) -> None:
        """The run's effective sandbox, written into the manifest from the next boundary on.

        Set before the run's first event; the drain reads it only when it writes the manifest.
        """
        self._state.sandbox = record

    def close(self) -> None:
        """Drain, fsync, write the manifest and release the lock; raise if anything failed."""
        if self._mark_closed():
            self._thread.join()
            self._release()
        if self._error is not None:
            raise self._raise_copy()

    def abort(self, timeout: float = 10.0) -> None:
        """Best-effort close after a failure: never raises.

        The lock is released only once the drain thread has stopped; a drain stuck in the kernel
        keeps it (the process exit releases it) so no second writer can interleave with it.
        """
        with contextlib.suppress(Exception):
            self._mark_closed()
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._release()

    def _mark_closed(self) -> bool:
        """Queue the close request once (under the producer mutex, so no event follows it)."""
        with self._mutex:
            if self._closed:
                return False
            self._closed = True
            self._q.put(Control("close"))
            return True

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _fail(self, detail: str) -> PersistenceError:
        """Mark the writer failed (first failure wins) and return the error to raise."""
        with self._durable_cv:
            if self._error is None:
                self._error = PersistenceError(
                    f"session event persistence failed: {detail}",
                    location=str(self.events_path),
                    hint="every event accepted before this failure is in the log; the run "
                    "cannot be reported as successful",
                )
            self._durable_cv.notify_all()
        return self._raise_copy()

    def _raise_copy(self) -> PersistenceError:
        err = self._error
        assert err is not None
        msg = err.message
        if self._lost:
            msg += f" ({self._lost} accepted events could not be written)"
        return PersistenceError(msg, location=err.location, hint=err.hint)

    def _release(self) -> None:
        if not self._released:
            self._released = True
            self._lock.release()

    def _run(self) -> None:
        try:
            while True:
                try:
                    first = self._q.get(timeout=_IDLE_POLL)
                except queue.Empty:
                    if not threading.main_thread().is_alive():
                        first = Control("close")  # interpreter exit without close(): finish up
                    else:
                        continue
                batch = [first]
                while len(batch) < _MAX_BATCH:
                    try:
                        batch.append(self._q.get_nowait())
                    except queue.Empty:
                        break
                if self._process(batch):
                    return
        except BaseException as e:  # pragma: no cover - a bug in the drain: still fail closed
            self._io_failed = True
            self._fail(f"internal drain error: {type(e).__name__}: {e}")
        finally:
            self._reserve.release()  # a closed session keeps no reserve
            self._cache.stop()
            with contextlib.suppress(OSError):
                if self._fd >= 0:
                    os.close(self._fd)
                    self._fd = -1
            with self._durable_cv:
                self._stopped = True
                self._durable_cv.notify_all()
            self._answer_pending()

    def _answer_pending(self) -> None:
        while True:
            try:
                item = self._q.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, Control):
                item.done.set()
            else:
                self._lost += 1

    def _process(self, batch: list[Any]) -> bool:
        """Write one batch; True when the drain should stop."""
        st = self._state
        boundary = False
        status_before = st.status
        n = b = 0
        controls: list[Control] = []
        for item in batch:
            if isinstance(item, Control):
                controls.append(item)
                if item.kind == "closing":
                    boundary |= self._write_closing(item)
                continue
            seq, line, etype, ts, run = item
            n += 1
            b += len(line)
            if self._io_failed or self._closing_only:
                self._lost += 1
                continue
            if self._write_line(seq, line, etype, ts, run):
                boundary = True
        with self._mutex:
            self._pending_n -= n
            self._pending_b -= b
        closing = any(c.kind == "close" for c in controls)
        if not self._io_failed:
            mode = self._mode
            cache = boundary or closing or st.status is not status_before
            flush = any(c.kind in ("flush", "closing") for c in controls)
            # A manifest never vouches for bytes that are not durable (except in `os` mode).
            if flush or (
                mode is not Durability.OS and (cache or (mode is Durability.EVENT and n > 0))
            ):
                self._fsync()
            if boundary and not self._io_failed and not self._closing_only:
                self._maybe_evict()
            if cache and not self._io_failed:
                self._cache.post(*cache_bytes(st), durable=mode is not Durability.OS)
            if closing or flush:  # after close/flush returns, the manifest describes the log
                self._cache.wait_idle()
        cb = self.on_written
        if cb is not None:
            cb(self._durable_seq if self._mode is Durability.EVENT else self._written_seq)
        for c in controls:
            c.done.set()
        return closing or self._io_failed

    def _write_line(self, seq: int, line: bytes, et: str, ts: str, run: RunSummary | None) -> bool:
        """Write one line (all or nothing); True when it is a durability boundary."""
        start = self._state.size
        try:
            fsutil.write_all(self._fd, line)
        except OSError as e:
            self._io_error("write", e, truncate_to=start)
            self._lost += 1
            return False
        self._written_seq = seq
        return self._state.apply(et, seq, ts, len(line), run)

    def _write_closing(self, ctl: Control) -> bool:
        """After a failure: write the closing events with the next gapless seqs."""
        boundary = False
        for event in ctl.events:
            if self._io_failed:
                return boundary
            seq, ts = self._written_seq + 1, rfc3339()
            try:
                line = encode_wrapped_line(event, seq=seq, ts=ts)
            except (ValueError, TypeError, RecursionError, OverflowError):
                return boundary
            boundary |= self._write_line(seq, line, etype(event), ts, run_summary(event, seq))
            if self._written_seq == seq:
                ctl.written.append((seq, event))
        return boundary

    def _fsync(self) -> None:
        if self._written_seq <= self._durable_seq:
            return
        try:
            os.fsync(self._fd)
        except OSError as e:
            self._io_error("fsync", e)  # state unknown since the last good fsync: never retried
            return
        with self._durable_cv:
            self._durable_seq = self._written_seq
            self._durable_size = self._state.size
            self._durable_cv.notify_all()
        cb = self.on_durable
        if cb is not None:
            cb(self._durable_seq)

    def _io_error(self, what: str, e: OSError, truncate_to: int | None = None) -> None:
        if truncate_to is not None:  # never keep our own partial line
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, truncate_to)
        with self._err_lock:  # the drain and the cache writer may both hit the full disk
            full = what != "fsync" and e.errno in FULL_DISK
            if full and (self._reserve.release() or self._closing_only):
                # The reserve's blocks are now free for the closing events; every other event
                # from here on is lost (counted), and the run fails.
                self._closing_only = True
            else:
                self._io_failed = True
        detail = os.strerror(e.errno) if e.errno else str(e)
        target = "" if "manifest" in what else f" {self.events_path.name}"
        self._fail(f"cannot {what}{target}: {detail} (errno {e.errno})")

    def _maybe_evict(self) -> None:
        st = self._state
        keep_from = st.eviction_cut(self._cfg.max_events)
        if keep_from is None:
            return
        durable = self._mode is not Durability.OS
        try:
            new_fd = keep_tail(
                self._fd, self.path, st.turns[keep_from].start_offset, st.size, durable
            )
        except OSError as e:
            self._io_error("evict old turns from", e)
            return
        os.close(self._fd)
        self._fd = new_fd
        st.evict(keep_from)
        if durable:
            self._durable_size = st.size
