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
from collections.abc import Callable
from typing import Any

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
