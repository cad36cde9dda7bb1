"""Read a JSONL stream line by line with bounded memory, even when a line is 100 MB of garbage.

`readline(limit)` never holds more than `max_line_bytes + 1` bytes of one line; the rest of an
over-long line is skipped in fixed-size chunks, so memory stays constant whatever the input.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["LAST_UNTERMINATED", "OK", "TOO_LONG", "LineReader"]

_SKIP_CHUNK = 1 << 20

# Line kinds (plain ints: compared on the hot path).
OK = 0  # newline-terminated, within the cap
LAST_UNTERMINATED = 1  # the final line of the stream has no newline (maybe torn)
TOO_LONG = 2  # longer than the cap: `data` is empty and `long_line_size` says how long it was


class LineReader:
    """Iterate `(line_number, data, kind)` over a binary stream; `bytes_read` tracks progress."""

    def __init__(self, stream: BinaryIO, max_line_bytes: int) -> None:
        self._stream = stream
        self._limit = max_line_bytes + 1
        self.bytes_read = 0
        self.long_line_size = 0

    def __iter__(self) -> Iterator[tuple[int, bytes, int]]:
        readline = self._stream.readline
        limit = self._limit
        number = 0
        while True:
            data = readline(limit)
            if not data:
                return
            number += 1
            self.bytes_read += len(data)
            if data[-1] == 0x0A:
                yield number, data, OK
            elif len(data) < limit:
                yield number, data, LAST_UNTERMINATED
            else:
                yield number, b"", self._skip_rest(len(data))

    def _skip_rest(self, size: int) -> int:
        """Drop the remainder of an over-long line without holding it."""
        while True:
            chunk = self._stream.readline(_SKIP_CHUNK)
            if not chunk:
                break
            self.bytes_read += len(chunk)
            size += len(chunk)
            if chunk[-1] == 0x0A:
                size -= 1
                break
        self.long_line_size = size
        return TOO_LONG
