"""The deadlines of one provider request: a total time and an idle time, kept even while a read
is blocked in the kernel.

`agent.request_timeout_secs` bounds a whole request, stream included, so a server that streams
deltas forever ends the turn instead of filling the disk. `agent.stream_idle_timeout_secs` bounds
the silence between two things the stream delivers (a delta or its end): SSE comments (`: ping`)
and Anthropic's `event: ping` keep the connection busy without progress, so they do not count.

httpx's read timeout applies per socket read and any byte resets it, so it can express neither.
A watchdog thread sleeps until the nearest deadline; once one has passed it records which and
calls `on_expire`, which shuts the socket down (that wakes a read blocked in recv). The reader
calls `check()` per chunk and, whatever the abort made the read raise, reports `error()`: one
line naming the limit, its configured value and the key that sets it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from vtcode.providers.base import FailureKind, ProviderError

__all__ = ["Deadlines", "RequestClock"]

TOTAL_KEY = "agent.request_timeout_secs"
IDLE_KEY = "agent.stream_idle_timeout_secs"


@dataclass(frozen=True, slots=True)
class Deadlines:
    """Seconds; 0 means no limit."""

    total: float = 0.0
    idle: float = 0.0

    def __post_init__(self) -> None:
        for key, value in ((TOTAL_KEY, self.total), (IDLE_KEY, self.idle)):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{key} must be a finite number >= 0 (0 = no limit), not {value}")

    @property
    def any(self) -> bool:
        return self.total > 0 or self.idle > 0

    def read_timeout(self, default: float | None) -> float | None:
        """The socket read timeout: the tightest configured limit, else `default`."""
        limits = [v for v in (self.total, self.idle) if v > 0]
        return min(limits) if limits else default


class RequestClock:
    """Started once per request attempt; `progress()` whenever the stream delivers something."""

    def __init__(self, provider: str, deadlines: Deadlines, on_expire: Callable[[], None]) -> None:
        self.provider = provider
        self.deadlines = deadlines
        self._on_expire = on_expire
        self._start = time.monotonic()
        self._last = self._start
        self._expired: str | None = None  # "total" or "idle", set once
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> RequestClock:
        if self.deadlines.any:
            self._thread = threading.Thread(
                target=self._watch, name=f"vtcode-{self.provider}-deadline", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def progress(self) -> None:
        self._last = time.monotonic()

    def _due(self, now: float) -> tuple[str | None, float]:
        """(the limit that has passed, or None; seconds until the nearest one otherwise)."""
        d = self.deadlines
        wait = math.inf
        if d.total > 0:
            left = self._start + d.total - now
            if left <= 0:
                return "total", 0.0
            wait = left
        if d.idle > 0:
            left = self._last + d.idle - now
            if left <= 0:
                return "idle", 0.0
            wait = min(wait, left)
        return None, wait

    def _watch(self) -> None:
        while True:
            which, wait = self._due(time.monotonic())
            if which is not None:
                self._expired = which
                self._on_expire()
                return
            if self._stop.wait(wait):
                return

    def expired(self) -> str | None:
        """Which limit has passed ("total" or "idle"), or None."""
        if self._expired is None:
            self._expired = self._due(time.monotonic())[0]
        return self._expired

    def check(self) -> None:
        """Raise the timeout error once a limit has passed (called per chunk read)."""
        if self.expired() is not None:
            raise self.error()

    def error(self, which: str | None = None) -> ProviderError:
        """The run-ending line for limit `which` (default: the one that passed)."""
        which = which or self.expired() or "idle"
        if which == "total":
            text = (
                f"{self.provider} request timed out: no complete response within "
                f"{self.deadlines.total:g} s ({TOTAL_KEY})"
            )
        else:
            text = (
                f"{self.provider} stream stalled: nothing received for "
                f"{self.deadlines.idle:g} s ({IDLE_KEY}; keep-alive pings do not count)"
            )
        return ProviderError(text, kind=FailureKind.TRANSIENT, provider=self.provider)

    def read_timed_out(self) -> ProviderError | None:
        """The error for a socket read timeout, when the read timeout came from these limits."""
        if not self.deadlines.any:
            return None
        which = self.expired()
        if which is None:  # the socket's clock rounds differently from ours
            which = (
                "idle"
                if self.deadlines.idle > 0
                and (self.deadlines.total <= 0 or self.deadlines.idle <= self.deadlines.total)
                else "total"
            )
        return self.error(which)
