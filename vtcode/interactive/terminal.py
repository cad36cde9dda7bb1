"""The terminal of a chat: prompted lines, Ctrl-C/Ctrl-D as results, one output stream.

On the process's own TTY (stdin and stdout both terminals) lines are read with prompt_toolkit
(history, Tab completion: `vtcode.interactive.editor`), an activity line shows what works and for
how long (`vtcode.interactive.spinner`) and answers are rendered as markdown (`rich_mode`). On any
other stream (tests, an embedding program) it is plain lines, exactly as before.

While the loop works, SIGINT belongs to the run's `CancelToken` (it cancels the user turn). While
a prompt waits for a line, SIGINT must end the wait instead: `read` swaps in Python's default
handler (KeyboardInterrupt) for the duration and reports `Key.INTERRUPT`. SIGTERM at a prompt still
reaches the token (so the run knows), then ends the wait as `Key.TERMINATE`.
"""

from __future__ import annotations

import contextlib
import enum
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtcode.interactive.editor import LineEditor
    from vtcode.interactive.spinner import Spinner

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


def _ttys(*streams: IO[str]) -> bool:
    try:
        return all(s.isatty() for s in streams)
    except (ValueError, OSError):  # a closed stream
        return False


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
        self.editor: LineEditor | None = None
        self.spinner: Spinner | None = None
        if self.stdin is sys.stdin and self.stdout is sys.stdout and _ttys(self.stdin, self.stdout):
            from vtcode.interactive.editor import LineEditor, history_path
            from vtcode.interactive.spinner import Spinner

            self.editor = LineEditor(history_path(), color=color)
            self.spinner = Spinner(self._raw)

    @property
    def rich_mode(self) -> bool:
        """A real terminal: answers are shown whole, as markdown, with an activity line."""
        return self.editor is not None

    def width(self) -> int:
        return shutil.get_terminal_size((100, 40)).columns

    # ------------------------------------------------------------------ output

    def _raw(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def write(self, text: str) -> None:
        if not text:
            return
        if self.spinner is None:
            self._raw(text)
            self.at_line_start = text.endswith("\n")
            return
        with self.spinner.lock:  # the activity line is erased first, never written over
            self.spinner.erase()
            self._raw(text)
            self.at_line_start = text.endswith("\n")
            self.spinner.line_free = self.at_line_start

    def busy(self, label: str | None) -> None:
        """Say what works now (a model request, a tool) on the activity line; None: nothing."""
        if self.spinner is not None:
            self.spinner.set(label)

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

    def read(self, prompt: str, *, chat: bool = False) -> Line:
        """One line; Ctrl-D, Ctrl-C and SIGTERM come back as `Key`s, never as exceptions.
        `chat`: a conversation line (remembered in the history, slash commands complete)."""
        self.before_prompt()  # what the run emitted so far is on screen before the prompt
        self.busy(None)
        self.newline()
        with self._prompt_signals():
            try:
                text = self._read(prompt, chat)
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

    def _read(self, prompt: str, chat: bool) -> str:
        if self.editor is not None:
            return self.editor.read(prompt, chat=chat)
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
