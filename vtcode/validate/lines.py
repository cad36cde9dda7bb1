"""Read a JSONL stream line by line with bounded memory, even when a line is 100 MB of garbage.

The stream is read in blocks of up to 1 MiB (`read1`: a pipe or a live log yields what it has,
without waiting for a full block) and split on newlines in C; a `readline` call per line cost
more than decoding the line. A line that spans blocks is gathered in one buffer that never holds
more than `max_line_bytes` plus one block; past the cap the rest of the line is skipped block by
block and reported as too long. `limit` bounds the bytes read (one byte range of a file, for the
two-process split in `vtcode.validate.split`).

Lines are yielded WITHOUT their newline; `kind` says whether there was one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

__all__ = ["LAST_UNTERMINATED", "OK", "TOO_LONG", "LineReader"]

_CHUNK = 1 << 20

# Line kinds (plain ints: compared on the hot path).
OK = 0  # newline-terminated, within the cap
LAST_UNTERMINATED = 1  # the final line of the stream has no newline (maybe torn)
TOO_LONG = 2  # longer than the cap: `data` is empty and `long_line_size` says how long it was


class ByteSource(Protocol):
    """What the reader needs of a stream (`read1` is used when it has one)."""

    def read(self, size: int = ..., /) -> bytes: ...


class LineReader:
    """Iterate `(line_number, data, kind)` over a binary stream; `bytes_read` tracks progress."""

    def __init__(
        self,
        stream: ByteSource,
        max_line_bytes: int,
        *,
        limit: int | None = None,
        first_line: int = 1,
        block_size: int = _CHUNK,
    ) -> None:
        self._stream = stream
        self._block = block_size
        self._cap = max_line_bytes
        self._limit = limit
        self._first = first_line
        self.bytes_read = 0
        self.long_line_size = 0

    def _reader(self) -> Callable[[int], bytes]:
        read1: Callable[[int], bytes] | None = getattr(self._stream, "read1", None)
        return read1 if read1 is not None else self._stream.read

    def __iter__(self) -> Iterator[tuple[int, bytes | bytearray, int]]:
        for first, lines, kind in self.runs():
            for offset, data in enumerate(lines):
                yield first + offset, data, kind

    def runs(self) -> Iterator[tuple[int, list[bytes], int]]:
        """`(first line number, lines, kind)`: a block's lines at once (one resume per block,
        not per line: the hot loop iterates the list); a TOO_LONG or LAST_UNTERMINATED line
        comes alone."""
        read = self._reader()
        cap = self._cap
        left = self._limit
        number = self._first - 1
        carry = bytearray()  # the start of a line no block has finished yet
        skipped = -1  # >= 0 while inside an over-long line: its size so far
        while left is None or left > 0:
            block = read(self._block if left is None else min(self._block, left))
            if not block:
                break
            self.bytes_read += len(block)
            if left is not None:
                left -= len(block)
            parts = block.split(b"\n")
            tail = parts.pop()
            if parts:
                if skipped >= 0:
                    number += 1
                    self.long_line_size = skipped + len(parts[0])
                    skipped = -1
                    yield number, [b""], TOO_LONG
                    del parts[0]
                elif carry:
                    carry += parts[0]
                    parts[0] = bytes(carry)
                    carry = bytearray()
                start = 0
                long_lines = parts and max(map(len, parts)) > cap
                for i, data in enumerate(parts if long_lines else ()):
                    if len(data) > cap:  # rare: cut the run around the long line
                        if i > start:
                            yield number + 1, parts[start:i], OK
                            number += i - start
                        number += 1
                        self.long_line_size = len(data)
                        yield number, [b""], TOO_LONG
                        start = i + 1
                if start < len(parts):
                    yield number + 1, parts[start:] if start else parts, OK
                    number += len(parts) - start
            if skipped >= 0:
                skipped += len(tail)
                continue
            carry += tail
            if len(carry) > cap:
                skipped = len(carry)
                carry = bytearray()
        if skipped >= 0:
            number += 1
            self.long_line_size = skipped
            yield number, [b""], TOO_LONG
        elif carry:
            yield number + 1, [bytes(carry)], LAST_UNTERMINATED
