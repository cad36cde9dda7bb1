"""Session locks: one filelock `FileLock` per lock path per process, plus an in-process guard.

Rules (reference/libraries.md §5, reliability.md §5): always an explicit timeout, mode 0600, lock
files are never deleted, one FileLock object per path per process. The FileLock is created with
`thread_local=False` so that the thread that closes a writer may release a lock another thread
took; the price is that FileLock no longer excludes threads of this process from each other, so a
`threading.Lock` per path does that job.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
import time
from pathlib import Path

from vtcode.errors import LockBusyError
from vtcode.ownfile import OWN_FLAGS, open_own


class SessionLock:
    """The lock of one session id in this process (get it from `session_lock`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._guard = threading.Lock()
        from filelock import FileLock  # here: importing filelock costs `sessions list` ~0.05 s

        self._file = FileLock(str(path), mode=0o600, thread_local=False, timeout=0)

    @property
    def held_here(self) -> bool:
        """True while some thread of this process holds the lock."""
        return self._guard.locked()

    def acquire(self, timeout: float, *, what: str = "session") -> None:
        """Take the lock within `timeout` seconds (0 = try once) or raise `LockBusyError`."""
        from filelock import Timeout

        deadline = time.monotonic() + max(0.0, timeout)
        got = (
            self._guard.acquire(timeout=timeout)
            if timeout > 0
            else self._guard.acquire(blocking=False)
        )
        if not got:
            raise self._busy(what, "this process")
        try:
            # filelock opens the path itself, blocking and following links: a FIFO, folder or
            # symlink planted at a lock path is refused here first (`vtcode.ownfile`).
            os.close(open_own(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            remaining = max(0.0, deadline - time.monotonic())
            if remaining > 0:
                self._file.acquire(timeout=remaining)
            else:
                self._file.acquire(blocking=False)
        except Timeout:
            self._guard.release()
            raise self._busy(what, "another process") from None
        except BaseException:
            self._guard.release()
            raise

    def try_acquire(self) -> bool:
        """Non-blocking acquire: False when anyone (this process included) holds it."""
        try:
            self.acquire(0)
        except LockBusyError:
            return False
        return True

    def release(self) -> None:
        try:
            self._file.release()
        finally:
            self._guard.release()

    def _busy(self, what: str, who: str) -> LockBusyError:
        return LockBusyError(
            f"{what} is in use by {who} (lock {self.path})",
            hint="another vtcode run is writing it; try again later",
        )


_REGISTRY: dict[str, SessionLock] = {}
_REGISTRY_GUARD = threading.Lock()


def session_lock(path: Path) -> SessionLock:
    """The one `SessionLock` of `path` in this process."""
    key = str(Path(path).absolute())
    with _REGISTRY_GUARD:
        lock = _REGISTRY.get(key)
        if lock is None:
            lock = _REGISTRY[key] = SessionLock(Path(key))
        return lock


def lock_is_held(path: Path) -> bool:
    """Whether any process (this one included) holds the lock at `path`; never creates files.

    Probes with a shared non-blocking flock on a read-only descriptor, the same lock kind
    filelock uses on Linux, so it works on read-only mounts and two probes never collide.
    """
    return lock_key_held(str(Path(path).absolute()))


def lock_key_held(key: str) -> bool:
    """`lock_is_held` of the absolute path `key`, spelled as `str(Path(p).absolute())` spells
    it (a listing probes thousands of locks; it builds the keys without pathlib)."""
    mine = _REGISTRY.get(key)  # one dict read is atomic; the guard serialises get-or-create
    if mine is not None and mine.held_here:
        return True
    try:
        fd = open_own(key, blocking=False)  # flock never blocks here: LOCK_NB
    except OSError:
        return False  # no lock file (or not a regular file): nobody can hold it through filelock
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)  # closing drops the probe's shared lock
    return False


_PROBE_FLAGS = os.O_RDONLY | OWN_FLAGS


class LockProbe:
    """`lock_key_held` for many locks of one folder, as one listing probes them: the folder is
    opened once and each lock relative to it, and the regular-file check (an fstat) is made only
    for a lock found held, since a free one answers False whatever it is. Same answers as
    `lock_key_held(folder + os.sep + name)`; a third fewer system calls per lock."""

    def __init__(self, folder: str) -> None:
        self._prefix = folder + os.sep  # spelled as `lock_key_held`'s key (the registry's)
        try:
            self._dir = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            self._dir = -1  # no lock folder: nobody can hold a lock in it through filelock

    def __enter__(self) -> LockProbe:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._dir >= 0:
            os.close(self._dir)
            self._dir = -1

    def held(self, name: str) -> bool:
        """Whether any process (this one included) holds the lock file `name` of the folder."""
        if _REGISTRY:  # a dict read is atomic (see lock_key_held)
            mine = _REGISTRY.get(self._prefix + name)
            if mine is not None and mine.held_here:
                return True
        if self._dir < 0:
            return False
        try:
            fd = os.open(name, _PROBE_FLAGS, dir_fd=self._dir)
        except OSError:
            return False  # no lock file, or a symlink: nobody holds it through filelock
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return stat.S_ISREG(os.fstat(fd).st_mode)  # open_own's refusal, made late
            raise
        finally:
            os.close(fd)
        return False
