"""`UserLines`, the reader behind `--input-format stream-json`, on a real pipe.

What a driving script relies on: lines are messages whether they come one per write or many in
one, a cap counts only what was taken as lines, and a cancel is seen while the reader waits for
a line that may never come (a blocking read misses a signal landing just before it starts: CI
once waited 100 s for a `thread.completed` after SIGINT).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

import pytest

from vtcode.errors import UsageError
from vtcode.loop.cancel import Cancelled
from vtcode.runtime.stream_input import UserLines


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    try:
        yield r, w
    finally:
        for fd in (r, w):
            with contextlib.suppress(OSError):
                os.close(fd)


def _msg(text: str) -> bytes:
    return f'{{"type":"user","text":"{text}"}}\n'.encode()


def test_many_lines_in_one_write_and_one_line_in_many(pipe: tuple[int, int]) -> None:
    r, w = pipe
    os.write(w, _msg("a") + _msg("b") + b"\n" + _msg("c")[:5])
    lines = UserLines(r, 1 << 20)
    assert [lines.next_message(), lines.next_message()] == ["a", "b"]
    os.write(w, _msg("c")[5:])
    os.close(w)
    assert lines.next_message() == "c"
    assert lines.next_message() is None
    assert lines.lineno == 4  # the blank line counts: errors name the line a script wrote


def test_the_cap_counts_lines_taken_not_bytes_read_ahead(pipe: tuple[int, int]) -> None:
    r, w = pipe
    first = _msg("a")
    os.write(w, first + _msg("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"))
    os.close(w)
    lines = UserLines(r, len(first) + 10)
    assert lines.next_message() == "a"  # read with the second line, still within the cap
    with pytest.raises(UsageError, match="larger than"):
        lines.next_message()


def test_a_cancel_is_seen_while_waiting_for_a_line_that_never_comes(
    pipe: tuple[int, int],
) -> None:
    r, _w = pipe  # the writer stays open and silent
    asked = threading.Event()
    cancelled = threading.Event()

    def interrupted() -> None:
        asked.set()
        if cancelled.is_set():
            raise Cancelled(2)

    outcome: list[BaseException] = []

    def read() -> None:
        try:
            UserLines(r, 1 << 20).next_message(interrupted)
        except BaseException as e:
            outcome.append(e)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert asked.wait(30)
    cancelled.set()  # no signal, no input: only the reader's own checks can see it
    reader.join(30)
    assert not reader.is_alive(), "the reader never saw the cancel"
    assert len(outcome) == 1 and isinstance(outcome[0], Cancelled)
