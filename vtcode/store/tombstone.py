"""Removing a session folder safely: only names the store owns, through a tombstone.

Shared by retention (old closed sessions) and `discard_unstarted` (a run that failed before its
first event). A folder is renamed to a tombstone `.trash-<id>-<stamp>-<r>` first, so a crash
mid-removal leaves a name no reader takes for a session, and the next pass finishes it; then the
known names are unlinked through directory descriptors (never following a symlink planted in the
folder) and the folder is removed only when nothing else is left in it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from vtcode.clock import compact_stamp
from vtcode.store.layout import (
    EVENTS,
    KNOWN_SUBDIRS,
    KNOWN_TOP,
    TRASH_PREFIX,
    is_known,
    lock_path,
    sessions_root,
)
from vtcode.store.locks import session_lock

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
DIR_FLAGS |= getattr(os, "O_CLOEXEC", 0)


def unknown_entries(dir_fd: int) -> list[str]:
    """Names in a session folder that the store does not own (symlinks are never ours)."""
    unknown: list[str] = []
    with os.scandir(dir_fd) as it:
        for entry in it:
            if entry.is_symlink():
                unknown.append(entry.name)
            elif entry.is_dir(follow_symlinks=False):
                patterns = KNOWN_SUBDIRS.get(entry.name)
                if patterns is None:
                    unknown.append(entry.name + "/")
                    continue
                sub = os.open(entry.name, DIR_FLAGS, dir_fd=dir_fd)
                try:
                    with os.scandir(sub) as it2:
                        for e2 in it2:
                            if (
                                e2.is_symlink()
                                or not e2.is_file(follow_symlinks=False)
                                or not is_known(e2.name, patterns)
                            ):
                                unknown.append(f"{entry.name}/{e2.name}")
                finally:
                    os.close(sub)
            elif not entry.is_file(follow_symlinks=False) or not is_known(entry.name, KNOWN_TOP):
                unknown.append(entry.name)
    return sorted(unknown)


def discard_unstarted(workspace: Path, session_id: str) -> bool:
    """Remove a session whose run failed before its first event (True when removed).

    `vtcode exec` creates the session before wiring tools, exporters and MCP servers; a usage
    error there (exit 2) must not leave an empty "abandoned" session that uses up the
    `--session-id`. Same safety rules as retention: under the session lock (busy: kept), only
    when events.jsonl is empty, only known names, through a tombstone; never follows symlinks.
    """
    lock = session_lock(lock_path(workspace, session_id))
    if not lock.try_acquire():
        return False
    try:
        root_fd = os.open(sessions_root(Path(workspace)), DIR_FLAGS)
        try:
            dfd = os.open(session_id, DIR_FLAGS, dir_fd=root_fd)
            try:
                if os.stat(EVENTS, dir_fd=dfd, follow_symlinks=False).st_size != 0:
                    return False
                if unknown_entries(dfd):
                    return False
            finally:
                os.close(dfd)
            tomb = f"{TRASH_PREFIX}{session_id}-{compact_stamp()}-{secrets.token_hex(3)}"
            os.rename(session_id, tomb, src_dir_fd=root_fd, dst_dir_fd=root_fd)
            purge(root_fd, tomb)
            with contextlib.suppress(OSError):
                os.fsync(root_fd)
            return True
        finally:
            os.close(root_fd)
    except OSError:
        return False
    finally:
        lock.release()


def purge(root_fd: int, tomb: str) -> list[str]:
    """Delete the known names inside tombstone `tomb`, then the folder; return what remains.

    Tolerates a concurrent purge of the same tombstone (names vanishing under it).
    """
    try:
        dfd = os.open(tomb, DIR_FLAGS, dir_fd=root_fd)
    except FileNotFoundError:
        return []
    left: list[str] = []
    try:
        with os.scandir(dfd) as it:
            entries = list(it)
        for entry in entries:
            name = entry.name
            patterns = KNOWN_SUBDIRS.get(name)
            if patterns is not None and entry.is_dir(follow_symlinks=False):
                left.extend(f"{name}/{n}" for n in _purge_sub(dfd, name, patterns))
            elif entry.is_file(follow_symlinks=False) and is_known(name, KNOWN_TOP):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=dfd)
            else:
                left.append(name)
    finally:
        os.close(dfd)
    if not left:
        try:
            os.rmdir(tomb, dir_fd=root_fd)
        except FileNotFoundError:
            pass
        except OSError:
            left.append("(folder not empty)")
    return sorted(left)


def _purge_sub(dfd: int, name: str, patterns: tuple[str, ...]) -> list[str]:
    try:
        sub = os.open(name, DIR_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        return []
    left: list[str] = []
    try:
        with os.scandir(sub) as it:
            inner = list(it)
        for e in inner:
            if e.is_file(follow_symlinks=False) and is_known(e.name, patterns):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(e.name, dir_fd=sub)
            else:
                left.append(e.name)
    finally:
        os.close(sub)
    if not left:
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(name, dir_fd=dfd)
    return left
