"""Standard input for `-`: one place for what every command that reads it must get right.

Cron and CI often run with standard input closed, and a pipe can carry bytes that are not UTF-8;
both are usage errors (exit 2, with a location), never a traceback, and never a run that starts
and then fails half-way on a prompt it cannot encode.
"""

from __future__ import annotations

import sys
from typing import BinaryIO

from vtcode.errors import UsageError

LOCATION = "<stdin>"


def stdin_buffer() -> BinaryIO | None:
    """The binary standard input, or None when the process has none (closed fd 0)."""
    buf: BinaryIO | None = getattr(sys.stdin, "buffer", None)
    return buf


def read_stdin_bytes(limit: int | None = None) -> bytes:
    """All of standard input (at most `limit` bytes when given)."""
    buf = stdin_buffer()
    if buf is None:
        raise UsageError(
            "standard input is closed: there is nothing to read for `-`",
            hint="pipe the input in (... | vtcode ...) or pass it as an argument",
        )
    try:
        return buf.read() if limit is None else buf.read(limit)
    except OSError as e:
        raise UsageError(
            f"cannot read standard input: {e.strerror or e}", location=LOCATION
        ) from None


def read_stdin_text() -> str:
    """Standard input as UTF-8 text (a leading BOM dropped); the first bad byte is located."""
    data = read_stdin_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise UsageError(
            f"standard input is not UTF-8 text (byte 0x{data[e.start]:02x})",
            location=f"{LOCATION}:{line}:{col}",
        ) from None
