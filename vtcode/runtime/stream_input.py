"""Streamed input (`exec --input-format stream-json`): user messages as JSON lines on stdin.

Each line is one user message and becomes the next user turn of the same session, so a script
can drive a conversation: read the events of a turn on stdout, then write the next line. Two
shapes are accepted: Claude Code's `{"type": "user", "message": {"role": "user", "content":
...}}` (content a string or a list of text blocks) and a plain `{"type": "user", "text": ...}`.
Blank lines are skipped. End of input ends the session with one `thread.completed`.

A line that is not such a message is a usage error naming the line (`<stdin>:N`): the first
line is read before the run starts (exit 2, no session); a later one ends the run at the prompt
with `input_error`, exit 2, after everything earlier was written. The whole input is bounded
like any stdin `-` (VTCODE_MAX_STDIN_BYTES, 16 MiB), a line by the same cap.
"""

from __future__ import annotations

import json
import os
import select
from collections.abc import Callable
from typing import Any

from vtcode.errors import UsageError
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.parts import UserAction
from vtcode.loop.runner import Runner
from vtcode.messages import Message
from vtcode.runtime.exec_run import Interaction, RunParts

__all__ = ["LOCATION", "StreamedTurns", "UserLines", "parse_user_line"]

LOCATION = "<stdin>"
_POLL = 0.25  # seconds a wait for input goes before it checks for a cancel again
_CHUNK = 1 << 16
_SHAPES = (
    'expected {"type": "user", "message": {"role": "user", "content": ...}} '
    'or {"type": "user", "text": ...}'
)


def parse_user_line(line: str, lineno: int) -> str:
    """The text of one user message line; anything else is a `UsageError` at `<stdin>:N`."""
    where = f"{LOCATION}:{lineno}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise UsageError(
            f"line {lineno} is not JSON: {e.msg} (column {e.colno})", location=where
        ) from None
    if not isinstance(data, dict) or data.get("type") != "user":
        raise UsageError(f"line {lineno} is not a user message: {_SHAPES}", location=where)
    if "message" in data:
        message = data["message"]
        if not isinstance(message, dict) or message.get("role", "user") != "user":
            raise UsageError(
                f'line {lineno}: "message" must be an object with "role": "user"', location=where
            )
        text = _content_text(message.get("content"), lineno, where)
    elif isinstance(data.get("text"), str):
        text = data["text"]
    else:
        raise UsageError(f"line {lineno} has no message text: {_SHAPES}", location=where)
    if not text.strip():
        raise UsageError(f"line {lineno}: the message is empty", location=where)
    return text


def _content_text(content: Any, lineno: int, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        parts = []
        for n, block in enumerate(content):
            if not (
                isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            ):
                kind = block.get("type") if isinstance(block, dict) else type(block).__name__
                raise UsageError(
                    f"line {lineno}: content block {n} is not a text block ({kind!r}); "
                    "only text is accepted",
                    location=where,
                )
            parts.append(block["text"])
        return "\n\n".join(parts)
    raise UsageError(
        f'line {lineno}: "content" must be a string or a list of text blocks', location=where
    )


class UserLines:
    """The user messages of a stream, one per non-blank line, read only when asked for (a
    script may wait for a turn's events before it writes the next line).

    Reads the descriptor itself, waiting at most `_POLL` seconds at a time and asking
    `interrupted` between waits: a blocking read can miss a signal that lands between Python's
    last check and the read starting, and the run then waits for a line that never comes (CI,
    loaded: SIGINT sent right after `turn.completed`, no `thread.completed` in 100 s).
    """

    def __init__(self, fd: int, cap: int) -> None:
        self.fd = fd
        self.cap = cap
        self.read_bytes = 0
        self.lineno = 0
        # Deleting a bytearray's head is cheap in CPython, so taking line after line from a
        # big chunk stays linear (a bytes slice would copy the rest each time).
        self._buf = bytearray()
        self._eof = False

    def next_message(self, interrupted: Callable[[], None] = lambda: None) -> str | None:
        """The next message's text; None at the end of input. Raises `UsageError`, and
        whatever `interrupted` raises (it is called while waiting for input)."""
        while True:
            raw = self._readline(interrupted)
            if raw is None:
                return None
            self.lineno += 1
            try:
                line = raw.decode("utf-8-sig" if self.lineno == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise UsageError(
                    f"line {self.lineno} is not UTF-8 text (byte 0x{raw[e.start]:02x})",
                    location=f"{LOCATION}:{self.lineno}:{e.start + 1}",
                ) from None
            if line.strip():
                return parse_user_line(line, self.lineno)

    def _readline(self, interrupted: Callable[[], None]) -> bytes | None:
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                return self._take(end + 1)
            self._check_cap(len(self._buf))  # a line already longer than what is left
            if self._eof:
                return self._take(len(self._buf)) or None
            interrupted()
            try:
                ready, _, _ = select.select([self.fd], [], [], _POLL)
                chunk = os.read(self.fd, _CHUNK) if ready else None
            except OSError as e:
                raise UsageError(
                    f"cannot read standard input: {e.strerror or e}", location=LOCATION
                ) from None
            if chunk is not None:
                self._eof = not chunk
                self._buf += chunk

    def _take(self, n: int) -> bytes:
        """The next `n` bytes of input as a line, counted against the cap."""
        self._check_cap(n)
        line = bytes(self._buf[:n])
        del self._buf[:n]
        self.read_bytes += n
        return line

    def _check_cap(self, n: int) -> None:
        if self.read_bytes + n > self.cap:
            raise UsageError(
                f"standard input is larger than {self.cap:,} bytes",
                location=f"{LOCATION}:{self.lineno + 1}",
                hint="raise the cap with VTCODE_MAX_STDIN_BYTES=BYTES",
            )


class StreamedTurns(Interaction):
    """The user side of a streamed-input run: each line is the next user turn; the end of
    input (or a bad line) ends the session at the prompt."""

    headless = True

    def __init__(self, lines: UserLines) -> None:
        self.lines = lines
        self.input_error: UsageError | None = None  # the bad line that ended the run
        self._settle: Callable[[], None] = lambda: None

    def attach(self, parts: RunParts) -> None:
        self._settle = parts.settle

    def next_action(self, runner: Runner) -> UserAction:
        # Everything of the last turn is written (and on stdout) before the next line is read.
        self._settle()
        try:
            # A signal while waiting for the script's next line ends the session (130) at once.
            with runner.cancel.interruptible():
                text = self.lines.next_message(runner.cancel.raise_if_cancelled)
        except UsageError as e:
            self.input_error = e
            return UserAction(leave=Outcome(OutcomeKind.INPUT_ERROR, detail=str(e)))
        if text is None:
            last_block = runner.chat.last_block if runner.chat is not None else None
            return UserAction(leave=last_block or Outcome(OutcomeKind.SUCCESS))
        return UserAction(message=Message(role="user", content=text))
