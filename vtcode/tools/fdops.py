"""Writes and walks on folder fds from `vtcode.tools.beneath` (no path string is re-resolved).

`replace_at` is `fsutil.atomic_write_bytes` done relative to an open folder: temp file created
O_EXCL|O_NOFOLLOW in that folder, written, given its final mode, fsynced, renamed over the name
(renameat with both fds the folder), folder fsynced. `walk` visits a tree holding one fd per
level, opening every subfolder O_NOFOLLOW|O_DIRECTORY from its parent's fd.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Generator
from dataclasses import dataclass

from vtcode.fsutil import write_all
from vtcode.tools.base import ToolError
from vtcode.tools.beneath import NEW_FILE_MODE, Located, kind_of, not_regular, open_subdir


def existing_mode(loc: Located) -> int | None:
    """The permission bits of the regular file at `loc`, None if nothing is there; a folder or
    another kind of file is refused (it would be replaced by a regular file)."""
    st = loc.lstat()
    if st is None:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{loc.rel!r} is a folder")
    if stat.S_ISLNK(st.st_mode):
        return None  # swapped in since it was located: the rename replaces the link itself
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(loc.rel, st.st_mode)
    return stat.S_IMODE(st.st_mode)


def replace_at(loc: Located, data: bytes, mode: int | None = None) -> None:
    """Atomically make `loc` a regular file holding `data` (mode kept, or 0666 & ~umask)."""
    if loc.name is None:
        raise ToolError(f"{loc.rel!r} is a folder")
    loc.make_parents()
    name = loc.name
    tmp = f".{name[:200]}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o600, dir_fd=loc.dir_fd)
    try:
        try:
            write_all(fd, data)
            os.fchmod(fd, NEW_FILE_MODE if mode is None else mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=loc.dir_fd, dst_dir_fd=loc.dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=loc.dir_fd)
        raise
    os.fsync(loc.dir_fd)


def unlink_at(loc: Located) -> None:
    """Remove the entry itself (a symlink is removed, never its target)."""
    if loc.name is None or loc.pending:
        raise FileNotFoundError(loc.rel)
    os.unlink(loc.name, dir_fd=loc.dir_fd)
    os.fsync(loc.dir_fd)


def link_at(loc: Located, target: str) -> None:
    """Recreate a symlink (apply_patch's rollback of a deleted link)."""
    if loc.name is not None:
        os.symlink(target, loc.name, dir_fd=loc.dir_fd)


def read_link(loc: Located) -> str:
    assert loc.name is not None
    return os.readlink(loc.name, dir_fd=loc.dir_fd)


@dataclass(frozen=True, slots=True)
class Entry:
    """One folder entry met by `walk`: the fd of its folder (open while the walk is on it),
    its name, its workspace-relative path and what it is (from d_type, never opened)."""

    dir_fd: int
    name: str
    rel: str
    kind: str  # "dir", "file", "link" or a `kind_of` name


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    try:
        return kind_of(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return "other"


def _scan(fd: int) -> list[os.DirEntry[str]]:
    with os.scandir(fd) as it:
        return sorted(it, key=lambda e: e.name)


def walk(
    base_fd: int, base_rel: str, *, recursive: bool, skip: Callable[[str], bool]
) -> Generator[list[Entry], None, None]:
    """The entries of `base_fd`, then (if `recursive`) of each subfolder depth-first, one
    sorted folder at a time (a folder's entries before its subfolders'). Folders for which
    `skip(name)` is true are left out; symlinked folders are listed, never entered. `base_fd`
    stays the caller's; the ones opened here are closed when the walk ends or is abandoned."""
    frames: list[tuple[int, str, list[str]]] = []

    def enter(fd: int, rel: str) -> list[Entry]:
        try:
            found = _scan(fd)
        except OSError:
            if not frames:
                raise  # the folder asked for: the caller reports it
            found = []
        prefix = "" if rel == "." else rel + "/"
        entries = [Entry(fd, e.name, prefix + e.name, _kind(e)) for e in found]
        entries = [e for e in entries if not (e.kind == "dir" and skip(e.name))]
        subs = [e.name for e in entries if e.kind == "dir"] if recursive else []
        frames.append((fd, rel, list(reversed(subs))))
        return entries

    try:
        yield enter(base_fd, base_rel)
        while len(frames) > 1 or (frames and frames[0][2]):
            fd, rel, subs = frames[-1]
            if not subs:
                os.close(fd)
                frames.pop()
                continue
            name = subs.pop()
            sub = open_subdir(fd, name)
            if sub is not None:
                yield enter(sub, name if rel == "." else f"{rel}/{name}")
    finally:
        for fd, _, _ in frames[1:]:
            os.close(fd)
