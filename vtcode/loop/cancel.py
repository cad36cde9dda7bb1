"""Cancellation: SIGINT/SIGTERM set a token; the loop stops at the next safe point.

"Finish the event": a signal never interrupts an emission. While the loop waits on something slow
(a model stream, a tool), the token is *interruptible* and the handler raises `Cancelled` right
there; otherwise it only sets the flag and the loop checks it between steps.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any


class Cancelled(Exception):
    """The run was cancelled by a signal (or by the token)."""

    def __init__(self, signum: int | None = None) -> None:
        super().__init__("cancelled" if signum is None else f"cancelled by signal {signum}")
        self.signum = signum


class CancelToken:
    """A flag shared by the loop and its tools (tools see `event`)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None
        self._interruptible = 0

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()

    def cancel(self, signum: int | None = None) -> None:
        self.signum = self.signum or signum
        self.event.set()

    def raise_if_cancelled(self) -> None:
        if self.event.is_set():
            raise Cancelled(self.signum)

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """Inside this block a signal raises `Cancelled` at once (nothing is being emitted)."""
        self.raise_if_cancelled()
        self._interruptible += 1
        try:
            yield
        finally:
            self._interruptible -= 1

    @contextlib.contextmanager
    def shielded(self) -> Iterator[None]:
        """A block a signal must not cut (one event's emission): it raises after, if at all."""
        saved, self._interruptible = self._interruptible, 0
        was_set = self.event.is_set()
        try:
            yield
        finally:
            self._interruptible = saved
        if saved > 0 and not was_set and self.event.is_set():
            raise Cancelled(self.signum)

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        first = not self.event.is_set()
        self.cancel(signum)
        if first and self._interruptible > 0:
            raise Cancelled(signum)

    @contextlib.contextmanager
    def installed(self) -> Iterator[CancelToken]:
        """Install SIGINT/SIGTERM handlers for the duration (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous: dict[signal.Signals, Any] = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, self._handler)
        try:
            yield self
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old)
