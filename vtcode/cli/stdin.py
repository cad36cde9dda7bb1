"""Standard input for `-`: one place for what every command that reads it must get right.

Cron and CI often run with standard input closed, and a pipe can carry bytes that are not UTF-8;
both are usage errors (exit 2, with a location), never a traceback, and never a run that starts
and then fails half-way on a prompt it cannot encode.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from typing import BinaryIO

from vtcode.errors import UsageError

LOCATION = "<stdin>"
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
MAX_BYTES_ENV = "VTCODE_MAX_STDIN_BYTES"
PIPED_WAIT_SECS = 3.0  # how long a prompt argument waits for piped context to start arriving
_CHUNK = 1024 * 1024


def max_stdin_bytes() -> int:
    """The cap on what `-` reads: 16 MiB, or VTCODE_MAX_STDIN_BYTES (a positive integer)."""
    raw = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise UsageError(
            f"{MAX_BYTES_ENV} must be a positive number of bytes, not {raw[:40]!r}",
            location=MAX_BYTES_ENV,
        )
    return value


def stdin_buffer() -> BinaryIO | None:
    """The binary standard input, or None when the process has none (closed fd 0)."""
    buf: BinaryIO | None = getattr(sys.stdin, "buffer", None)
    return buf


def read_stdin_bytes(limit: int | None = None) -> bytes:
    """All of standard input, refused (exit 2) past `limit` bytes (default `max_stdin_bytes()`).

    Reading is bounded whatever is on the other end: `< /dev/zero` or an endless producer costs
    at most `limit` + one chunk of memory, then a usage error, instead of growing until the
    machine swaps.
    """
    cap = max_stdin_bytes() if limit is None else limit
    buf = stdin_buffer()
    if buf is None:
        raise UsageError(
            "standard input is closed: there is nothing to read for `-`",
            hint="pipe the input in (... | vtcode ...) or pass it as an argument",
        )
    parts: list[bytes] = []
    size = 0
    try:
        while size <= cap:
            chunk = buf.read(min(_CHUNK, cap + 1 - size))
            if not chunk:
                return b"".join(parts)
            parts.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise UsageError(
            f"cannot read standard input: {e.strerror or e}", location=LOCATION
        ) from None
    raise UsageError(
        f"standard input is larger than {cap:,} bytes",
        location=LOCATION,
        hint=f"pass a smaller input, or raise the cap with {MAX_BYTES_ENV}=BYTES",
    )


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise UsageError(
            f"standard input is not UTF-8 text (byte 0x{data[e.start]:02x})",
            location=f"{LOCATION}:{line}:{col}",
        ) from None


def read_stdin_text() -> str:
    """Standard input as UTF-8 text (a leading BOM dropped); the first bad byte is located."""
    return _decode(read_stdin_bytes())


def read_piped_context(wait_secs: float = PIPED_WAIT_SECS) -> tuple[str | None, str | None]:
    """What was piped in beside a prompt argument (`echo ctx | vtcode exec "x"`): (text, note).

    Only a pipe or a regular file counts: a terminal, a closed fd 0 or a device (`< /dev/null`,
    cron's usual stdin) is no context. A pipe nobody writes to (a supervisor that keeps fd 0
    open) must not hold the run forever, so the first byte or the end of input has `wait_secs`
    to arrive; otherwise the run goes on without it and `note` says why. Once input arrives it
    is read to its end under the same cap and UTF-8 rule as `-`. Empty input is no context.
    """
    buf = stdin_buffer()
    if buf is None:
        return None, None
    try:
        fd = buf.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return None, None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        return None, None
    if not stat.S_ISREG(mode):
        ready, _, _ = select.select([fd], [], [], wait_secs)
        if not ready:
            return None, (
                f"standard input is a pipe with nothing on it after {wait_secs:g}s; "
                "going on without it (redirect < /dev/null to skip the wait)"
            )
    text = _decode(read_stdin_bytes())
    return (text if text.strip() else None), None
