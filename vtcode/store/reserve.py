"""A per-session disk reserve: blocks preallocated so the closing events fit on a full disk.

When the drain's write of `events.jsonl` fails with ENOSPC/EDQUOT, removing the reserve file
gives the filesystem back `store.reserve_bytes`, enough for `turn.failed` and
`thread.completed`: a run on a full disk still ends with its terminal event. The file is
removed at every close; one left by a killed process is replaced by the next writer.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from vtcode import fsutil
from vtcode.ownfile import open_own

RESERVE = ".reserve"
FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT})
_MIN = 16 * 1024  # below this the closing events may not fit anyway


class Reserve:
    """Owns `<session>/.reserve`; `release` frees it (idempotent, never raises)."""

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = 0
        if size <= 0:
            return
        try:
            fd = open_own(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, fsutil.FILE_MODE)
        except OSError:
            return  # no reserve: a full disk then ends like before (no terminal event)
        try:
            floor = min(_MIN, size)
            while size >= floor:  # an almost full disk still gets what it can spare
                try:
                    os.posix_fallocate(fd, 0, size)  # real blocks, not a sparse promise
                except OSError as e:
                    if e.errno not in FULL_DISK:
                        break
                    size //= 2
                    continue
                self.size = size
                return
            with contextlib.suppress(OSError):
                os.unlink(path)
        finally:
            os.close(fd)

    @property
    def held(self) -> bool:
        return self.size > 0

    def release(self) -> bool:
        """Give the blocks back; True when there was something to give."""
        had = self.size > 0
        self.size = 0
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        return had
