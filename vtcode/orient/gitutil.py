"""Small, bounded git queries: never a failure when git is missing or this is not a repository.

Every call goes through `vtcode.gitsafe` (no program a repository names ever runs, and
`GIT_OPTIONAL_LOCKS=0`: a status query must not take the index lock a user's own git is waiting
for), has a short timeout, and returns None when git cannot answer.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from vtcode.gitsafe import UnsafeRepositoryError, run_git

__all__ = ["git", "head_commit", "modified_files", "recent_log", "repo_root"]

QUERY_TIMEOUT_SECS = 5.0


def git(
    args: Sequence[str],
    cwd: Path,
    *,
    timeout: float = QUERY_TIMEOUT_SECS,
    check: bool = False,
    strict: bool = False,
) -> subprocess.CompletedProcess[str] | None:
    """Run vtcode's own `git ARGS` in `cwd` (through `vtcode.gitsafe`: no repository-named
    program runs); None when git is missing, times out, or (with check) fails.

    A repository whose config vtcode refuses to run git in is None too (orientation simply has
    no git facts), or with `strict` raises `UnsafeRepositoryError` (a command the user asked
    for, such as a worktree merge, says why)."""
    try:
        proc = run_git(args, cwd, timeout=timeout)
    except UnsafeRepositoryError:
        if strict:
            raise
        return None
    if proc is None or (check and proc.returncode != 0):
        return None
    return proc


def repo_root(workspace: Path, *, strict: bool = False) -> Path | None:
    proc = git(["rev-parse", "--show-toplevel"], workspace, check=True, strict=strict)
    return Path(proc.stdout.strip()) if proc and proc.stdout.strip() else None


def recent_log(workspace: Path, count: int = 5) -> str | None:
    """`git log --oneline -5 --no-decorate` (None outside a repository or with no commits)."""
    proc = git(["log", "--oneline", f"-{count}", "--no-decorate"], workspace, check=True)
    if proc is None or not proc.stdout.strip():
        return None
    return proc.stdout.rstrip("\n")


def head_commit(workspace: Path) -> str | None:
    proc = git(["rev-parse", "HEAD"], workspace, check=True)
    return proc.stdout.strip() if proc and proc.stdout.strip() else None


def porcelain_paths(output: str) -> list[str]:
    """The paths of `git status --porcelain=v1 -z` output (a rename or copy as its new path)."""
    out: list[str] = []
    fields = output.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        if "R" in entry[:2] or "C" in entry[:2]:
            i += 1  # the next field is the source path
        out.append(entry[3:])
    return out


def modified_files(workspace: Path) -> list[str] | None:
    """Paths `git status --porcelain` reports (renames as the new path), `.vtcode/` excluded."""
    proc = git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], workspace, check=True)
    if proc is None:
        return None
    return [
        p for p in porcelain_paths(proc.stdout) if not (p == ".vtcode" or p.startswith(".vtcode/"))
    ]
