"""The activity line of a chat on a real terminal: a spinner, what is working, elapsed seconds.

`⠋ model 3.2s` while a model request runs, `⠋ exec_command 12.0s` while a tool does. Drawn by a
small daemon thread on the cursor's line only when that line is empty (never over streamed
text), and erased (`CR`, erase-line) under the same lock before anything else is written, so the
conversation never holds a spinner fragment. It is plain text, not colour: NO_COLOR leaves it on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["Spinner"]

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PERIOD = 0.1  # seconds between frames
CLEAR = "\r\x1b[2K"


class Spinner:
    """Owns the cursor's empty line while something works; `raw` writes to the terminal."""

    def __init__(self, raw: Callable[[str], None]) -> None:
        self.raw = raw
        self.lock = threading.RLock()
        self.label: str | None = None
        self.since = 0.0
        self.shown = False
        self.line_free = True  # the cursor is at the start of an empty line
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def set(self, label: str | None) -> None:
        """Show `label` (elapsed time restarts when it changes), or nothing (None)."""
        with self.lock:
            if label != self.label:
                self.since = time.monotonic()
            self.label = label
            if label is None:
                self.erase()
            elif self._thread is None:
                self._thread = threading.Thread(target=self._run, name="chat-spinner", daemon=True)
                self._thread.start()
        self._wake.set()

    def erase(self) -> None:
        """Remove the drawn line (callers hold `lock`, or are about to write under it)."""
        with self.lock:
            if self.shown:
                self.raw(CLEAR)
                self.shown = False

    def frame(self, now: float) -> str:
        elapsed = now - self.since
        return f"{FRAMES[int(elapsed / PERIOD) % len(FRAMES)]} {self.label} {elapsed:.1f}s"

    def _run(self) -> None:
        while True:
            self._wake.wait(PERIOD)
            self._wake.clear()
            with self.lock:
                if self.label is not None and self.line_free:
                    self.raw((CLEAR if self.shown else "") + self.frame(time.monotonic()))
                    self.shown = True
