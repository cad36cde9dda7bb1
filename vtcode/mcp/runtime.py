"""One asyncio event loop in a background thread, for a synchronous caller.

The MCP SDK is asyncio/anyio based and the agent loop is synchronous. Every coroutine of a run's
MCP sessions runs on this one loop (an anyio task group must be entered and left on the loop that
made it), and the loop's caller waits on a `concurrent.futures.Future` with a deadline and the
run's cancel event, so neither a silent server nor a signal can wedge the agent loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from vtcode.threads import BackgroundThread

__all__ = ["CallCancelled", "CallTimeout", "LoopThread"]

T = TypeVar("T")
_POLL_SECS = 0.05  # the cancel event is re-checked, and signal handlers run, this often


class CallTimeout(Exception):
    """The coroutine did not finish before its deadline (it was cancelled)."""


class CallCancelled(Exception):
    """The run's cancel event was set while waiting (the coroutine was cancelled)."""


class LoopThread:
    """A daemon thread running one event loop until `stop()`."""

    def __init__(self, name: str = "vtcode-mcp") -> None:
        self.loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = BackgroundThread(target=self._main, name=name, daemon=True)
        self._thread.start()
        self._started.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        try:
            self.loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    self.loop.run_until_complete(
                        asyncio.wait(pending, timeout=2.0)  # bounded: never hang the exit
                    )
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(
        self,
        coro: Coroutine[Any, Any, T],
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> T:
        """Run `coro` on the loop and wait at most `timeout` seconds (or until `cancel`)."""
        fut = self.submit(coro)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                fut.cancel()
                raise CallTimeout(f"no answer within {timeout:g}s")
            if cancel is not None and cancel.is_set():
                fut.cancel()
                raise CallCancelled("cancelled while waiting")
            # Sliced even without `cancel`: the main thread waiting out a server's start
            # inside `interruptible` ran a SIGINT whose C handler came just before the wait
            # blocked only at the end (`vtcode.threads.wait_event` says why).
            slice_ = min(remaining, _POLL_SECS)
            # `wait`, not `result(timeout)`: a coroutine that itself raised TimeoutError must not
            # look like "still running".
            try:
                done, _ = concurrent.futures.wait([fut], timeout=slice_)
            except BaseException:  # a signal handler raised (Ctrl-C, the run's Cancelled)
                fut.cancel()  # as on a timeout: the coroutine stops, the caller's close is quick
                raise
            if done:
                return fut.result()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop the loop (pending tasks are cancelled); False if the thread did not end in time."""
        if self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # loop already closed
                self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
        return not self._thread.is_alive()
