"""One way to open vtcode's own files: never a hang, never a surprise, never unbounded.

vtcode reads and writes files it owns or trusts (everything under `.vtcode/` and VTCODE_HOME,
the user and workspace config, the trust store). A sandboxed command can write `.vtcode/` in
some setups, so any of those names may have been replaced by a FIFO (an `open` that blocks until
a writer comes, forever for a cron loop), a socket, a device, a folder, a symlink, or a 2 GiB
sparse file. Every open of such a file goes through `open_own`:

- `O_NOFOLLOW` on the last component: a symlink there is refused, never followed. Parent
  folders are followed: they are vtcode's own 0700 folders under a workspace or home whose own
  path may legitimately contain links (`/home -> /data/home`), which a whole-path
  `RESOLVE_NO_SYMLINKS` would refuse.
- `O_NONBLOCK` on the open, so a FIFO opens at once (or fails with ENXIO for writing) instead
  of waiting for a peer; `fstat` of the fd then requires a regular file, and only then is
  blocking mode restored. The check and the use are the same fd: nothing can be swapped in
  between.
- `read_own` bounds what it reads: a file larger than the caller's limit is refused by its size
  (before reading) and by what was read (a file that grew meanwhile).

A refusal is an `OwnFileRefused`, an `OSError` naming the path and what it is, so callers that
treat an unreadable file as missing keep doing so, and one that lets it propagate reaches the
CLI's located exit 2 ("cannot complete the command: ... is a FIFO, not a regular file").
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
OWN_FLAGS = _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_NOCTTY
FILE_MODE = 0o600

# Read bounds by what a file is; each caller names the one that fits.
SMALL_TEXT = 1 << 20  # notes, decisions, summaries, manifests, the trust store, config files
STATE_DOC = 4 << 20  # JSON state documents (progress, steering queue, context state)
LARGE_DOC = 64 << 20  # loop state, indexes that grow with a long history

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISLNK, "a symlink"),
)


class OwnFileRefused(OSError):
    """A file of vtcode's own is not a regular file, is a symlink, or is too large."""


def kind_of(mode: int) -> str:
    """`a FIFO`, `a socket`, ... for a file mode that is not a regular file."""
    return next((word for test, word in _KINDS if test(mode)), "not a regular file")


def _refused(path: Path | str, why: str, code: int = errno.EINVAL) -> OwnFileRefused:
    return OwnFileRefused(code, why, str(path))


def open_own(
    path: Path | str, flags: int = os.O_RDONLY, mode: int = FILE_MODE, *, blocking: bool = True
) -> int:
    """An fd on the regular file `path`, opened as described above (`flags` are the access
    mode plus O_CREAT/O_TRUNC/O_APPEND/O_EXCL as needed). Raises `OwnFileRefused` for a
    symlink or anything but a regular file, other `OSError`s as `open(2)` does. `blocking=False`
    leaves the fd non-blocking, for a caller that neither reads nor writes it (a lock probe)."""
    try:
        fd = os.open(path, flags | OWN_FLAGS, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            why = "a symlink (vtcode does not follow links to its own files)"
            raise _refused(path, why, errno.ELOOP) from None
        if e.errno in (errno.ENXIO, errno.EISDIR, errno.EOPNOTSUPP):
            raise _refused(path, f"{_lkind(path)}, not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refused(path, f"{kind_of(st.st_mode)}, not a regular file")
        if blocking:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lkind(path: Path | str) -> str:
    try:
        return kind_of(os.lstat(path).st_mode)
    except OSError:
        return "not a regular file"


def read_fd(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from `fd`, read in 1 MiB pieces until end of file (the one read
    loop of every bounded read: own files here, `-i` images in vtcode/images.py)."""
    chunks: list[bytes] = []
    got = 0
    while got < limit:
        chunk = os.read(fd, min(1 << 20, limit - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_own(path: Path | str, limit: int) -> bytes:
    """The whole content of regular file `path`, at most `limit` bytes; a larger file is
    refused (`OwnFileRefused`) rather than cut, so no caller mistakes a part for the whole."""
    fd = open_own(path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise _refused(path, f"{size} bytes, larger than the {limit} vtcode reads here")
        data = read_fd(fd, limit + 1)
        if len(data) > limit:
            raise _refused(path, f"larger than the {limit} bytes vtcode reads here")
        return data
    finally:
        os.close(fd)


def read_own_prefix(path: Path | str, limit: int) -> bytes:
    """At most the first `limit` bytes of regular file `path` (for callers that detect an
    oversized file themselves by asking for one byte more than they accept)."""
    return read_own_prefix_stat(path, limit)[0]


def read_own_prefix_stat(path: Path | str, limit: int) -> tuple[bytes, os.stat_result]:
    """`read_own_prefix`, with the `fstat` of the very file that was read: a cache keyed on
    that stat (inode, size, times) then describes these bytes, never a file swapped in later."""
    fd = open_own(path)
    try:
        st = os.fstat(fd)
        return read_fd(fd, limit), st
    finally:
        os.close(fd)
