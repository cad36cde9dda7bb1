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

A signal whose C handler runs just before the main thread blocks in a socket read (the model
stream) does not interrupt that read, and Python's handler would wait for the server's next
bytes (minutes, with a slow local model). So a wait that is a socket read passes a `wake` to
`interruptible`: while the block runs, the signal's wakeup byte reaches a watcher thread
(`vtcode.threads.SignalWakeup`), which calls `wake` to end the read (the provider shuts its
socket down); the main thread then runs the handler, which raises as usual. The watcher only
wakes: it never sets the flag, so the handler's own rule (the first signal raises) still decides.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from vtcode.threads import SignalWakeup, background_thread

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
        self._handling = 0  # `installed` blocks with the handlers in place (main thread)
        self._wakes: list[Callable[[], None]] = []  # of the `interruptible` blocks running
        self._wakes_lock = threading.Lock()  # never taken by `_handler` (it runs mid-bytecode)

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
    def interruptible(self, wake: Callable[[], None] | None = None) -> Iterator[None]:
        """Inside this block a signal raises `Cancelled` at once (nothing is being emitted).

        `wake` ends the blocking read the block may be in (callable from any thread; it must
        end only that read, never a later one): it is called when a signal arrives during the
        block, with the handlers installed on the main thread."""
        self.raise_if_cancelled()
        # Around the count: the watcher is torn down once the count has dropped, when a signal
        # no longer raises into its teardown (unless an outer block is interruptible too).
        with self._waking(wake):
            self._interruptible += 1
            try:
                self.raise_if_cancelled()  # a signal between the first check and the count
                yield
            finally:
                self._interruptible -= 1

    @contextlib.contextmanager
    def _waking(self, wake: Callable[[], None] | None) -> Iterator[None]:
        """Register `wake`; the outermost block with one runs the signal watcher."""
        on_main = threading.current_thread() is threading.main_thread()
        if wake is None or not self._handling or not on_main:
            yield
            return
        with self._wakes_lock:
            self._wakes.append(wake)
            outermost = len(self._wakes) == 1
        try:
            if outermost:
                with SignalWakeup(self._wake):
                    yield
            else:
                yield
        finally:
            with self._wakes_lock:
                self._wakes.remove(wake)

    def _wake(self, signum: int) -> None:
        """On the watcher thread: end the blocked read if the handler will raise for `signum`
        (a block is interruptible and this is the first signal); once it has run, the flag is
        set and there is nothing left to wake."""
        with self._wakes_lock:
            if self._interruptible <= 0 or self.event.is_set():
                return
            for wake in list(self._wakes):
                with contextlib.suppress(Exception):  # one failing wake must not stop the rest
                    wake()

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
        self._handling += 1
        try:
            yield self
        finally:
            self._handling -= 1
            for sig, old in previous.items():
                signal.signal(sig, old)
            self._released.set()
