"""The terminal of a chat: prompted lines (readline), Ctrl-C/Ctrl-D as results, one output stream.

While the loop works, SIGINT belongs to the run's `CancelToken` (it cancels the user turn). While
a prompt waits for a line, SIGINT must end the wait instead: `read` swaps in Python's default
handler (KeyboardInterrupt) for the duration and reports `Key.INTERRUPT`. SIGTERM at a prompt still
reaches the token (so the run knows), then ends the wait as `Key.TERMINATE`.
"""

from __future__ import annotations

import contextlib
import enum
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import IO, Any

__all__ = ["Key", "Line", "Terminal"]


def _nothing() -> None:
    """No run attached yet: nothing to wait for before a prompt."""


class Key(enum.Enum):
    TEXT = "text"
    EOF = "eof"  # Ctrl-D on an empty line, or stdin closed
    INTERRUPT = "interrupt"  # Ctrl-C
    TERMINATE = "terminate"  # SIGTERM


@dataclass(frozen=True, slots=True)
class Line:
    key: Key
    text: str = ""


class _Terminated(Exception):
    pass


class Terminal:
    """Reads prompted lines and writes the conversation; tracks the cursor's line start."""

    def __init__(
        self,
        *,
        stdin: IO[str] | None = None,
        stdout: IO[str] | None = None,
        color: bool = False,
    ) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.color = color
        self.at_line_start = True
        # Called before every prompt; the session points it at the gate's `settle`.
        self.before_prompt: Callable[[], None] = _nothing
        # input() gives readline editing and history, but only on the real console streams.
        self._use_input = self.stdin is sys.stdin and self.stdout is sys.stdout
        if self._use_input:
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401  (importing it is what enables line editing)

    # ------------------------------------------------------------------ output

    def write(self, text: str) -> None:
        if not text:
            return
        self.stdout.write(text)
        self.stdout.flush()
        self.at_line_start = text.endswith("\n")

    def line(self, text: str = "") -> None:
        """`text` on a line of its own."""
        self.newline()
        self.write(text + "\n")

    def newline(self) -> None:
        if not self.at_line_start:
            self.write("\n")

    def style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    # ------------------------------------------------------------------ input

    def read(self, prompt: str) -> Line:
        """One line; Ctrl-D, Ctrl-C and SIGTERM come back as `Key`s, never as exceptions."""
        self.before_prompt()  # what the run emitted so far is on screen before the prompt
        self.newline()
        with self._prompt_signals():
            try:
                text = self._read(prompt)
            except EOFError:
                self.write("\n")
                return Line(Key.EOF)
            except KeyboardInterrupt:
                self.write("^C\n")
                return Line(Key.INTERRUPT)
            except _Terminated:
                self.write("\n")
                return Line(Key.TERMINATE)
        self.at_line_start = True
        return Line(Key.TEXT, text)

    def _read(self, prompt: str) -> str:
        if self._use_input:
            return input(prompt)
        self.write(prompt)
        text = self.stdin.readline()
        if not text:
            raise EOFError
        return text.rstrip("\n")

    @contextlib.contextmanager
    def _prompt_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous_term = signal.getsignal(signal.SIGTERM)

        def on_term(signum: int, frame: FrameType | None) -> None:
            if callable(previous_term):
                previous_term(signum, frame)  # the run's token records the signal
            raise _Terminated

        old_int: Any = signal.signal(signal.SIGINT, signal.default_int_handler)
        old_term: Any = signal.signal(signal.SIGTERM, on_term)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, old_int)
            signal.signal(signal.SIGTERM, old_term)
