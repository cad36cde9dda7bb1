"""A thread that starts commands already inside the sandbox, so `Popen` can use vfork.

Applying Landlock in `preexec_fn` forces CPython to `fork()` the whole vtcode process for every
command (bench/sandbox.py: ~5 ms here, more as vtcode grows). Landlock and no_new_privs are
per-thread attributes, inherited by a thread's children, so one long-lived thread restricts
itself once and starts every command of its workspace: `Popen` without `preexec_fn` takes the
vfork path and the child is born inside the domain. The thread does nothing else (it never
opens files), so the restriction costs vtcode nothing.

The thread lives as long as the run's sandbox: PR_SET_PDEATHSIG (set by `setpriv` in the
launcher) fires when the *thread* that started a process exits, so a worker thread that came
and went would kill its commands.
"""

from __future__ import annotations

import queue
import signal
import threading
from collections.abc import Callable
from typing import TypeVar

from vtcode.sandbox import landlock
from vtcode.threads import BackgroundThread

__all__ = ["Spawner"]

T = TypeVar("T")
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class Spawner:
    """One restricted thread; `call(fn)` runs `fn` (a `Popen`) on it and returns its result."""

    def __init__(self, ruleset_fd: int, name: str) -> None:
        self._q: queue.SimpleQueue[tuple[Callable[[], object], list[object], threading.Event]] = (
            queue.SimpleQueue()
        )
        self._ready = threading.Event()
        self._error: OSError | None = None
        self._closed = False
        self._thread = BackgroundThread(target=self._main, args=(ruleset_fd,), name=name)
        self._thread.daemon = True
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def _main(self, ruleset_fd: int) -> None:
        try:
            landlock.restrict_self(ruleset_fd)  # this thread only (and what it starts)
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        while True:
            fn, box, done = self._q.get()
            if done is _STOP:
                return
            # BackgroundThread blocks SIGINT/SIGTERM and a vfork child inherits the mask: a
            # command must be born with them deliverable.
            old = signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
            try:
                box.append(fn())
            except BaseException as exc:  # handed to the caller, raised there
                box.append(_Failed(exc))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
                done.set()

    def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the restricted thread; its exception is raised here."""
        if self._closed:
            raise RuntimeError("the sandbox spawner is closed")
        box: list[object] = []
        done = threading.Event()
        self._q.put((fn, box, done))
        done.wait()
        result = box[0]
        if isinstance(result, _Failed):
            raise result.exc
        return result  # type: ignore[return-value]

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._q.put((_noop, [], _STOP))
            self._thread.join(timeout=5)


class _Failed:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _noop() -> None:
    return None


_STOP = threading.Event()
