"""Cancellation: SIGINT/SIGTERM set a token; the loop stops at the next safe point.

"Finish the event": a signal never interrupts an emission. While the loop waits on something slow
(a model stream, a tool), the token is *interruptible* and the handler raises `Cancelled` right
there; otherwise it only sets the flag and the loop checks it between steps.

SIGTERM always ends the process within a bounded time (issue 30): the first one also arms a
watchdog thread. A run (with its closing steps) still going `VTCODE_CANCEL_GRACE_SECS` later
(default 10) is blocked where no flag reaches (a lifecycle hook waiting out its timeout, a write
to a pipe or FIFO nobody reads, a drain waiting on such a write), and the watchdog ends it with
exit 130 and one line on stderr. The session log is then as after a SIGKILL: the next writer
closes it (`store/closeout.py`). A normal cancellation (tools stopped, `thread.completed`
written) takes well under a second. Uninstalling the handlers disarms the watchdog, so an
in-process caller goes on after its run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

from vtcode.threads import background_thread

DEFAULT_GRACE_SECS = 10.0
_EXIT_CANCELLED = 130


def cancel_grace_secs() -> float:
    """Seconds between the first SIGINT/SIGTERM and the watchdog's exit (`VTCODE_CANCEL_GRACE_SECS`;
    a value that is not a positive number means the default)."""
    try:
        value = float(os.environ.get("VTCODE_CANCEL_GRACE_SECS", ""))
    except ValueError:
        return DEFAULT_GRACE_SECS
    return value if value > 0 else DEFAULT_GRACE_SECS


def _watchdog(grace: float, released: threading.Event) -> None:
    """Ends the process `grace` seconds after a SIGTERM unless the handlers were uninstalled
    first (the run and its closing steps are over; an in-process caller goes on)."""
    if released.wait(grace):
        return
    msg = f"vtcode: still running {grace:g} s after the cancel signal; exiting (code 130)\n"
    with contextlib.suppress(OSError):
        os.write(2, msg.encode())
    os._exit(_EXIT_CANCELLED)


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
        self._armed = False
        self._released = threading.Event()  # set unless `installed` has the handlers in place
        self._released.set()

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
            self.raise_if_cancelled()  # a signal between the first check and the count
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
        if signum == signal.SIGTERM and not self._armed and not self._released.is_set():
            # SIGTERM means "end": bounded whatever the run is blocked on. SIGINT only cancels
            # the current turn (a chat goes on), so it arms nothing.
            self._armed = True
            grace = cancel_grace_secs()
            args = (grace, self._released)
            background_thread(_watchdog, name="cancel-watchdog", args=args).start()
        if first and self._interruptible > 0:
            raise Cancelled(signum)

    @contextlib.contextmanager
    def installed(self) -> Iterator[CancelToken]:
        """Install SIGINT/SIGTERM handlers for the duration (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous: dict[signal.Signals, Any] = {}
        self._released.clear()
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, self._handler)
        try:
            yield self
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old)
            self._released.set()
