"""The spool file of one command: lazily created (0600, O_EXCL), appended, fsynced at EOF, capped.

Split from `exec_sessions`. `tools.max_spool_bytes` caps one file: a command that prints forever
must not fill the disk under `.vtcode/`; what is past the cap is dropped, counted, and said at
the end of the file (and in the tool output).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

from vtcode.fsutil import FILE_MODE, ensure_private_dir, fsync_dir, write_all
from vtcode.tools.exec_output import SPOOL_THRESHOLD

DEFAULT_MAX_SPOOL_BYTES = 64 * 1024 * 1024  # `tools.max_spool_bytes`'s default


class Spool:
    """The spool file of one session: lazily created, appended by the pump, fsynced at EOF."""

    def __init__(
        self,
        directory: Path,
        name: str,
        workspace: Path,
        max_bytes: int = DEFAULT_MAX_SPOOL_BYTES,
    ) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.written = 0  # bytes of output in the file
        self.dropped = 0  # bytes of output past `max_bytes`, not written
        self.name = name
        self.workspace = workspace
        self.early = bytearray()  # output before the file exists (<= SPOOL_THRESHOLD)
        self.fd: int | None = None
        self.path: Path | None = None
        self.error: str | None = None
        self.complete = False

    @property
    def started(self) -> bool:
        return self.path is not None

    def rel_path(self) -> str | None:
        if self.path is None:
            return None
        try:
            return self.path.relative_to(self.workspace.resolve()).as_posix()
        except ValueError:
            return str(self.path)

    def add(self, data: bytes, total: int) -> None:
        if self.error:
            return
        if self.fd is None:
            self.early += data
            if total > SPOOL_THRESHOLD:
                self.start()
            return
        self._write(data)

    def start(self) -> None:
        """Create the file (O_EXCL, 0600) and write everything seen so far."""
        if self.started or self.error:
            return
        try:
            ensure_private_dir(self.directory)
            self.fd, self.path = _create_exclusive(self.directory, self.name)
            self._write(bytes(self.early))
        except OSError as exc:
            self.error = f"spool unavailable: {exc.strerror or exc}"
            self._close()
        self.early = bytearray()

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def finish(self) -> None:
        """The pipe hit EOF: say what the cap dropped, make the spool durable, mark it complete."""
        if self.fd is not None:
            if self.dropped:
                note = (
                    f"\n[vtcode: spool truncated at {self.max_bytes} bytes "
                    f"(tools.max_spool_bytes); {self.dropped} more bytes of output were dropped]\n"
                )
                self._write_raw(note.encode())
            try:
                os.fsync(self.fd)
                if self.path is not None:
                    fsync_dir(self.path.parent)
            except OSError as exc:
                self.error = f"spool fsync failed: {exc.strerror or exc}"
            self._close()
        self.complete = True

    def _write(self, data: bytes) -> None:
        """Append output up to the cap; count the rest as dropped."""
        if self.fd is None or not data:
            return
        room = max(0, self.max_bytes - self.written)
        if len(data) > room:
            self.dropped += len(data) - room
            data = data[:room]
        self.written += len(data)
        self._write_raw(data)

    def _write_raw(self, data: bytes) -> None:
        if self.fd is None or not data:
            return
        try:
            write_all(self.fd, data)
        except OSError as exc:
            self.error = f"spool write failed: {exc.strerror or exc}"
            self._close()

    def _close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def _create_exclusive(directory: Path, name: str) -> tuple[int, Path]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for attempt in itertools.count():
        stem = name if attempt == 0 else f"{name}-{os.getpid()}-{attempt}"
        path = directory / f"{stem}.txt"
        try:
            return os.open(path, flags, FILE_MODE), path
        except FileExistsError:
            if attempt > 1000:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
