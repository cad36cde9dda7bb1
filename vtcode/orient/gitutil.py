"""Small, bounded git queries: never a failure when git is missing or this is not a repository.

Every call has a short timeout, runs with `GIT_OPTIONAL_LOCKS=0` (a status query must not take
the index lock a user's own git is waiting for) and returns None when git cannot answer.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["git", "head_commit", "modified_files", "recent_log", "repo_root"]

QUERY_TIMEOUT_SECS = 5.0


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("LC_ALL", "C")
    return env


def git(
    args: Sequence[str], cwd: Path, *, timeout: float = QUERY_TIMEOUT_SECS, check: bool = False
) -> subprocess.CompletedProcess[str] | None:
    """Run `git ARGS` in `cwd`; None when git is missing, times out, or (with check) fails."""
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if check and proc.returncode != 0:
        return None
    return proc


def repo_root(workspace: Path) -> Path | None:
    proc = git(["rev-parse", "--show-toplevel"], workspace, check=True)
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
