"""Background threads that never receive SIGINT/SIGTERM, so the main thread always does.

The kernel delivers a process-directed signal to any thread that does not block it. Python runs
handlers in the main thread, but only when that thread wakes up: if the signal landed on a drain
or pump thread while the main thread sat in a blocking read (a chat prompt, a tool wait), the
read was never interrupted and Ctrl-C did nothing. Threads started here inherit a signal mask
that blocks both signals, so the kernel picks the main thread.
"""

from __future__ import annotations

import signal
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
