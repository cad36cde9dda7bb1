"""Whether anything in a run's folder changed: one fingerprint at the start, one at the end.

A small model says it renamed a function after running only the task's own test commands, which
pass on the untouched project (qwen0.5b, rename-symbol, four runs of 2026-12-07: "The tests
passed, indicating that the function `compute_total` has been renamed correctly"); a command
that ran counted as work done, so each run was a `success` with nothing renamed. Of the 76
compact runs of the public suite that ended `success` in the evals of 2026-12-07, the 11 whose
folder was unchanged all failed their task; every one of the 32 that passed had changed it
(`bench/eval_audit.py`).
Counting the model's writes does not tell this (a command may change files, a write may write
a file's own content back), so the harness compares the files themselves.

The fingerprint hashes each regular file's bytes (a write of the same content is no change),
names symlinks by their target and folders by name, and follows nothing. Caches a run makes by
only running things (`__pycache__`, `.pytest_cache`, ...) and the folders that are not the
work (`.git`, `.vtcode`, `node_modules`, virtual environments) are left out. A folder past
`MAX_ENTRIES` has no fingerprint, and then nothing is judged: the walk must stay cheap.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_ENTRIES", "FolderWatch", "fingerprint"]

MAX_ENTRIES = 20_000
_HASH_FILE_MAX = 4 << 20  # bigger files are known by size and mtime
_HASH_BUDGET = 64 << 20  # bytes hashed per fingerprint; past it, size and mtime
_LEFT_OUT = frozenset(
    {
        ".git", ".hg", ".svn", ".vtcode", "__pycache__", ".pytest_cache", ".mypy_cache",
        ".ruff_cache", ".tox", ".nox", ".venv", "venv", "node_modules",
    }
)  # fmt: skip


def fingerprint(root: Path) -> str | None:
    """A digest of the files under `root` as they are now, or None when `root` cannot be read
    or holds more than `MAX_ENTRIES` entries."""
    digest = hashlib.blake2b(digest_size=20)
    budget = [_HASH_BUDGET]
    entries = 0
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                found = sorted((e.name, e) for e in it)
        except OSError:
            if not rel_dir:
                return None
            digest.update(f"unreadable\0{rel_dir}\0".encode(errors="surrogateescape"))
            continue
        for name, entry in found:
            if name in _LEFT_OUT:
                continue
            entries += 1
            if entries > MAX_ENTRIES:
                return None
            rel = f"{rel_dir}{name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone since the listing
            digest.update(_entry(root, rel, st, budget).encode(errors="surrogateescape"))
            if stat.S_ISDIR(st.st_mode):
                stack.append(rel + "/")
    return digest.hexdigest()


def _entry(root: Path, rel: str, st: os.stat_result, budget: list[int]) -> str:
    """One line of the fingerprint: the kind, the path and what the content is known by."""
    if stat.S_ISLNK(st.st_mode):
        try:
            return f"l\0{rel}\0{(root / rel).readlink()}\0"
        except OSError:
            return f"l\0{rel}\0?\0"
    if stat.S_ISDIR(st.st_mode):
        return f"d\0{rel}\0"
    if not stat.S_ISREG(st.st_mode):  # a FIFO or socket: never opened
        return f"o\0{rel}\0{stat.S_IFMT(st.st_mode)}\0"
    known_by = f"{st.st_size}:{st.st_mtime_ns}"
    if st.st_size <= min(_HASH_FILE_MAX, budget[0]):
        content = _content_hash(root / rel)
        if content is not None:
            budget[0] -= st.st_size
            known_by = f"{st.st_size}:{content}"
    return f"f\0{rel}\0{known_by}\0"


def _content_hash(path: Path) -> str | None:
    """The file's bytes hashed, read without following a symlink and without blocking on a
    FIFO swapped in since the listing; None when it cannot be read as a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            h = hashlib.blake2b(digest_size=20)
            while chunk := f.read(1 << 16):
                h.update(chunk)
                if f.tell() > _HASH_FILE_MAX:
                    return None  # grew since the listing: known by size and mtime
        except OSError:
            return None
    return h.hexdigest()


@dataclass(slots=True)
class FolderWatch:
    """The folder's fingerprint when the task was given (a fresh run only: a resumed run's
    earlier turns may have done the work), to tell at the end whether anything changed."""

    before: str | None = None

    def start(self, root: Path) -> None:
        self.before = fingerprint(root)

    def unchanged(self, root: Path) -> bool:
        """True only when the folder is known to be as it was at `start`."""
        return self.before is not None and fingerprint(root) == self.before
