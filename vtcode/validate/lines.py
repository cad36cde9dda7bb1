"""Read a JSONL stream line by line with bounded memory, even when a line is 100 MB of garbage.

Ordinary lines come from one `readline(1 MiB)` call. A longer line is gathered chunk by chunk into
one growing buffer, never more than `max_line_bytes + 1` bytes (a plain `readline(cap)` would
hold the chunks *and* their join, twice the cap); past the cap the rest is skipped in chunks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["LAST_UNTERMINATED", "OK", "TOO_LONG", "LineReader"]

_CHUNK = 1 << 20

# Line kinds (plain ints: compared on the hot path).
OK = 0  # newline-terminated, within the cap
LAST_UNTERMINATED = 1  # the final line of the stream has no newline (maybe torn)
TOO_LONG = 2  # longer than the cap: `data` is empty and `long_line_size` says how long it was


class LineReader:
    """Iterate `(line_number, data, kind)` over a binary stream; `bytes_read` tracks progress."""

    def __init__(self, stream: BinaryIO, max_line_bytes: int) -> None:
        self._stream = stream
        self._limit = max_line_bytes + 1  # content plus its newline
        self.bytes_read = 0
        self.long_line_size = 0

    def __iter__(self) -> Iterator[tuple[int, bytes | bytearray, int]]:
        readline = self._stream.readline
        limit = self._limit
        first = min(limit, _CHUNK)
        number = 0
        while True:
            data: bytes | bytearray = readline(first)
            if not data:
                return
            number += 1
            self.bytes_read += len(data)
            if data[-1] != 0x0A and len(data) == first:
                data = self._gather(data)
                if not data:
                    yield number, b"", TOO_LONG
                    continue
            if data[-1] == 0x0A:
                yield number, data, OK
            else:
                yield number, data, LAST_UNTERMINATED

    def _gather(self, head: bytes | bytearray) -> bytearray:
        """The rest of a long line, or an empty buffer (and a skip) once it passes the cap."""
        buf = bytearray(head)
        readline = self._stream.readline
        while len(buf) < self._limit:
            chunk = readline(min(_CHUNK, self._limit - len(buf)))
            if not chunk:
                return buf
            self.bytes_read += len(chunk)
            buf += chunk
            if chunk[-1] == 0x0A:
                return buf
        size = len(buf)
        del buf
        self._skip_rest(size)
        return bytearray()

    def _skip_rest(self, size: int) -> None:
        """Drop the remainder of an over-long line without holding it."""
        while True:
            chunk = self._stream.readline(_CHUNK)
            if not chunk:
                break
            self.bytes_read += len(chunk)
            size += len(chunk)
            if chunk[-1] == 0x0A:
                size -= 1
                break
        self.long_line_size = size
