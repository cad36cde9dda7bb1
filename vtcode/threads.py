"""Background threads that never receive SIGINT/SIGTERM, so the main thread always does.

The kernel delivers a process-directed signal to any thread that does not block it. Python runs
handlers in the main thread, but only when that thread wakes up: if the signal landed on a drain
or pump thread while the main thread sat in a blocking read (a chat prompt, a tool wait), the
read was never interrupted and Ctrl-C did nothing. Threads started here inherit a signal mask
that blocks both signals, so the kernel picks the main thread.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Any, TypeVar

T = TypeVar("T")

_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class BackgroundThread(threading.Thread):
    """A `threading.Thread` whose signal mask blocks SIGINT and SIGTERM from its first instant."""

    def start(self) -> None:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            super().start()  # the new thread inherits the blocked mask
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def background_thread(
    target: Callable[..., Any],
    *,
    name: str | None = None,
    args: tuple[Any, ...] = (),
    daemon: bool = True,
) -> BackgroundThread:
    return BackgroundThread(target=target, name=name, args=args, daemon=daemon)


# Longest the main thread blocks in one wait before Python's signal handlers get to run.
SIGNAL_SLICE_SECS = 0.05


def wait_event(event: threading.Event, seconds: float) -> bool:
    """`event.wait(seconds)` that still runs a signal handler within `SIGNAL_SLICE_SECS`.

    A blocking wait is interrupted only by a signal that arrives while it blocks. One whose C
    handler ran just before (the main thread was between two bytecodes, or waiting for the GIL
    behind a busy thread) is handled when the wait ends: a SIGINT during a 30 s backoff or a
    replayed delay waited out all 30 s (seen as a 30 s test in 1 of 3 full suite runs; made
    certain with `_thread.interrupt_main`, which trips the flag without interrupting the wait).
    Short slices return to the interpreter, which runs the pending handler."""
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        left = deadline - time.monotonic()
        if event.wait(min(SIGNAL_SLICE_SECS, max(0.0, left))):
            return True
        if left <= SIGNAL_SLICE_SECS:
            return event.is_set()


def future_result(future: Future[T]) -> T:
    """`future.result()`, waited for in `SIGNAL_SLICE_SECS` slices like `wait_event`: the main
    thread waiting on a pool thread (parallel read-only tools) ran a pending SIGINT handler
    only once every call had finished, retries and backoffs included (3.0 s for a signal at
    0.05 s in a review's test of that path). A pool thread's own TimeoutError is its result,
    never taken for the slice's."""
    while not future.done():
        wait([future], timeout=SIGNAL_SLICE_SECS)
    return future.result()


class SignalWakeup:
    """While entered on the main thread, `on_signal(signum)` runs on a watcher thread as soon as
    SIGINT or SIGTERM arrives, whatever the main thread is blocked in.

    A blocking socket read (the model stream) cannot be cut into `SIGNAL_SLICE_SECS` slices the
    way `wait_event` cuts a wait: when a signal's C handler runs just before the main thread
    enters `recv()`, the read is not interrupted and Python's handler waits for the server's next
    bytes. The C handler does write the signal number to the wakeup fd (`signal.set_wakeup_fd`),
    though, so this points it at a socket pair whose other end a background thread reads; the
    callback then unblocks the read (shuts its socket down) and the handler runs on the main
    thread. The callback decides nothing: Python's handler still does, when it runs.

    The wakeup fd is claimed for the block only and handed back on exit. It is global and others
    take it too: asyncio (prompt_toolkit's chat prompt) sets its own and clears it with -1 when
    its loop ends, so one claimed for a whole run would be gone after the first prompt. Bytes of
    other signals are passed on to the previous fd, whose owner still handles them. A callback
    never runs after `__exit__` has begun, so a late signal cannot reach a later block. Off the
    main thread (no handlers there) or where no wakeup fd can be set, it does nothing.
    """

    def __init__(self, on_signal: Callable[[int], None]) -> None:
        self._on_signal = on_signal
        self._lock = threading.Lock()
        self._stopping = False
        self._pair: tuple[socket.socket, socket.socket] | None = None
        self._previous = -1
        self._thread: BackgroundThread | None = None

    def __enter__(self) -> SignalWakeup:
        if threading.current_thread() is not threading.main_thread():
            return self
        reader, writer = socket.socketpair()
        writer.setblocking(False)  # the C handler must never block on it
        try:
            self._previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError):  # e.g. not the main interpreter
            reader.close()
            writer.close()
            return self
        self._pair = (reader, writer)
        self._thread = background_thread(self._watch, name="signal-wakeup", args=(reader,))
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        pair, self._pair = self._pair, None
        if pair is None:
            return
        reader, writer = pair
        with self._lock:
            self._stopping = True
        try:
            current = signal.set_wakeup_fd(self._previous)
            if current != writer.fileno():  # someone took it after us: theirs now
                signal.set_wakeup_fd(current)
        finally:
            with contextlib.suppress(OSError):
                writer.send(b"\0")  # not a signal number: wakes the watcher to see `_stopping`
            if self._thread is not None:
                self._thread.join(5.0)
            reader.setblocking(False)
            with contextlib.suppress(OSError):  # BlockingIOError: all read
                while data := reader.recv(64):  # came in after the watcher's last read
                    self._pass_on(data)
            reader.close()
            writer.close()

    def _watch(self, reader: socket.socket) -> None:
        while True:
            try:
                data = reader.recv(64)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self._pass_on(data)
                if self._stopping:
                    return
                for signum in sorted({b for b in data if b in _SIGNALS}):
                    self._on_signal(signum)

    def _pass_on(self, data: bytes) -> None:
        """Other signals' bytes to the previous wakeup fd (its owner's handlers expect them)."""
        others = bytes(b for b in data if b not in _SIGNALS and b != 0)
        if others and self._previous >= 0:
            with contextlib.suppress(OSError):
                os.write(self._previous, others)
