"""One long-lived thread that starts every sandboxed command of a run.

PR_SET_PDEATHSIG (set in each command's keeper, see `child`) fires when the *thread* that forked
the process exits, not the process: a command started from a worker thread that came and went
would be killed with it. This thread lives as long as the run's sandbox and does nothing but
start commands. It blocks no signal while it forks: a child inherits the thread's signal mask.
"""

from __future__ import annotations

import queue
import signal
import threading
from collections.abc import Callable
from typing import TypeVar

from vtcode.threads import BackgroundThread

__all__ = ["Spawner"]

T = TypeVar("T")
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class Spawner:
    """One restricted thread; `call(fn)` runs `fn` (a `Popen`) on it and returns its result."""

    def __init__(self, name: str) -> None:
        self._q: queue.SimpleQueue[tuple[Callable[[], object], list[object], threading.Event]] = (
            queue.SimpleQueue()
        )
        self._closed = False
        self._thread = BackgroundThread(target=self._main, name=name)
        self._thread.daemon = True
        self._thread.start()

    def _main(self) -> None:
        while True:
            fn, box, done = self._q.get()
            if done is _STOP:
                return
            # BackgroundThread blocks SIGINT/SIGTERM and a child inherits the mask: a command
            # must be born with them deliverable.
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
