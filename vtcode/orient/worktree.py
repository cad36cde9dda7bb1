"""Subagent git worktrees: `.vtcode/worktrees/<name>-<stamp>`, branch `vtcode/<name>-<stamp>`.

A worktree-isolated child works in its own checkout, so its edits cannot touch the main tree
until `merge`: commit everything the child changed in the worktree (never its `.vtcode/`), then
`git merge --no-ff` that branch into the current one. A conflict aborts the merge (the main tree
is left as it was) and names the files. Before a worktree is removed (merge or drop), the child's
sessions are moved into the main workspace's `.vtcode/sessions/`, so no session log is lost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

from vtcode.clock import compact_stamp
from vtcode.errors import NotFoundError, UsageError, VtcodeError
from vtcode.fsutil import ensure_private_dir
from vtcode.ids import check_id
from vtcode.orient import gitutil
from vtcode.orient.gitutil import porcelain_paths
from vtcode.orient.paths import worktrees_dir

__all__ = [
    "MergeConflictError",
    "Worktree",
    "create_worktree",
    "drop_worktree",
    "find_worktree",
    "list_worktrees",
    "merge_worktree",
]

BRANCH_PREFIX = "vtcode/"
GIT_OP_TIMEOUT_SECS = 120.0
_EXCLUDE_VTCODE = ":(exclude,top).vtcode"


class WorktreeError(VtcodeError):
    """A git operation on a subagent worktree failed (nothing was changed in the main tree)."""


class MergeConflictError(WorktreeError):
    """Merging a worktree would conflict; the merge was aborted."""


@dataclasses.dataclass(frozen=True, slots=True)
class Worktree:
    name: str  # "<subagent>-<stamp>"
    path: Path  # the worktree root (a full checkout of the repository)
    branch: str
    workdir: Path  # where the child works: the workspace's place inside the worktree
    head: str | None = None
    changed: tuple[str, ...] = ()  # uncommitted paths (excluding .vtcode/)
    ahead: int = 0  # commits on the branch that the current branch lacks

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": str(self.path),
            "branch": self.branch,
            "workdir": str(self.workdir),
            "head": self.head,
            "changed": list(self.changed),
            "ahead": self.ahead,
        }


def git(
    args: list[str], cwd: Path, *, timeout: float = GIT_OP_TIMEOUT_SECS, check: bool = False
) -> subprocess.CompletedProcess[str] | None:
    """vtcode's own git (`gitutil.git`), strict: a repository vtcode refuses says why."""
    return gitutil.git(args, cwd, timeout=timeout, check=check, strict=True)


def _run(args: list[str], cwd: Path, what: str) -> str:
    proc = git(args, cwd, timeout=GIT_OP_TIMEOUT_SECS)
    if proc is None:
        raise WorktreeError(f"{what}: git is not available (or timed out)")
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise WorktreeError(f"{what}: {detail[-1] if detail else f'git exited {proc.returncode}'}")
    return proc.stdout


def _root(workspace: Path) -> Path:
    root = gitutil.repo_root(workspace, strict=True)
    if root is None:
        raise UsageError(
            f"{workspace} is not in a git repository",
            hint='isolation = "worktree" needs git: run `git init` and commit once',
        )
    return root


def _workdir(workspace: Path, root: Path, wt_path: Path) -> Path:
    rel = Path(os.path.realpath(workspace)).relative_to(os.path.realpath(root))
    return wt_path / rel


def create_worktree(workspace: Path, agent: str) -> Worktree:
    """`git worktree add -b vtcode/<agent>-<stamp> .vtcode/worktrees/<agent>-<stamp> HEAD`."""
    check_id(agent, "subagent name")
    root = _root(workspace)
    if git(["rev-parse", "--verify", "-q", "HEAD"], root, check=True) is None:
        raise UsageError(f"{root} has no commits yet; a worktree needs one to branch from")
    base = ensure_private_dir(worktrees_dir(workspace))
    stamp = compact_stamp()
    name = f"{agent}-{stamp}"
    n = 1
    while (base / name).exists():
        n += 1
        name = f"{agent}-{stamp}-{n}"
    path = base / name
    branch = BRANCH_PREFIX + name
    _run(["worktree", "add", "-q", "-b", branch, str(path), "HEAD"], root, "git worktree add")
    return Worktree(name=name, path=path, branch=branch, workdir=_workdir(workspace, root, path))


def _registered(root: Path) -> dict[Path, str]:
    """Worktree path -> branch (refs/heads/ stripped) from `git worktree list --porcelain`."""
    out = _run(["worktree", "list", "--porcelain"], root, "git worktree list")
    found: dict[Path, str] = {}
    current: Path | None = None
    for line in out.splitlines():
        if line.startswith("worktree "):
            current = Path(os.path.realpath(line[len("worktree ") :]))
            found[current] = ""
        elif line.startswith("branch ") and current is not None:
            found[current] = line[len("branch ") :].removeprefix("refs/heads/")
    return found


def _status(path: Path) -> tuple[str, ...]:
    out = _run(
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", _EXCLUDE_VTCODE],
        path,
        "git status",
    )
    return tuple(porcelain_paths(out))


def list_worktrees(workspace: Path) -> list[Worktree]:
    """The subagent worktrees of this workspace that git still knows, by name."""
    base = worktrees_dir(workspace)
    if not base.is_dir():
        return []
    root = _root(workspace)
    registered = _registered(root)
    out: list[Worktree] = []
    for entry in sorted(base.iterdir()):
        real = Path(os.path.realpath(entry))
        if entry.is_symlink() or real not in registered:
            continue
        branch = registered[real]
        head = git(["rev-parse", "HEAD"], entry, check=True)
        ahead = git(["rev-list", "--count", f"HEAD..{branch}"], root, check=True)
        out.append(
            Worktree(
                name=entry.name,
                path=entry,
                branch=branch,
                workdir=_workdir(workspace, root, entry),
                head=head.stdout.strip() if head else None,
                changed=_status(entry),
                ahead=int(ahead.stdout.strip()) if ahead and ahead.stdout.strip() else 0,
            )
        )
    return out


def find_worktree(workspace: Path, name: str) -> Worktree:
    check_id(name, "worktree name")
    for wt in list_worktrees(workspace):
        if wt.name == name:
            return wt
    known = ", ".join(w.name for w in list_worktrees(workspace)) or "none"
    raise NotFoundError(f"no subagent worktree {name!r} (known: {known})")


def _identity(cwd: Path) -> list[str]:
    """`-c user.name/-c user.email` only when git has no identity configured."""
    have = git(["config", "user.email"], cwd, check=True)
    if have is not None and have.stdout.strip():
        return []
    return ["-c", "user.name=vtcode", "-c", "user.email=vtcode@localhost"]


def adopt_sessions(wt: Worktree, workspace: Path) -> list[str]:
    """Move the child's closed sessions into the main workspace's store (ids are unique)."""
    from vtcode.store.layout import LOCKS_DIR, ensure_root, is_real_dir, sessions_root
    from vtcode.store.locks import lock_is_held

    src = sessions_root(wt.workdir)
    if not src.is_dir():
        return []
    dest = ensure_root(workspace)
    moved: list[str] = []
    for entry in sorted(src.iterdir()):
        if entry.name.startswith(".") or not is_real_dir(entry):
            continue
        if lock_is_held(src / LOCKS_DIR / f"{entry.name}.lock") or (dest / entry.name).exists():
            continue
        with contextlib.suppress(OSError):
            entry.rename(dest / entry.name)
            moved.append(entry.name)
    return moved


def commit_worktree(wt: Worktree, message: str) -> str | None:
    """Commit every change in the worktree except `.vtcode/`; the new HEAD (None: nothing)."""
    _run(["add", "-A"], wt.path, "git add")
    # Never commit the child's own .vtcode/ (sessions, spools), ignored or not.
    inner = (wt.workdir.relative_to(wt.path) / ".vtcode").as_posix()
    drop = sorted({".vtcode", inner})
    _run(["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *drop], wt.path, "git rm")
    staged = git(["diff", "--cached", "--quiet"], wt.path)
    if staged is not None and staged.returncode == 0:
        return None
    _run([*_identity(wt.path), "commit", "-q", "-m", message], wt.path, "git commit")
    return _run(["rev-parse", "HEAD"], wt.path, "git rev-parse").strip()


def merge_worktree(workspace: Path, name: str, *, keep: bool = False) -> dict[str, object]:
    """Commit the worktree, merge its branch into the current branch, then remove it.

    Raises `MergeConflictError` (the merge is aborted, the main tree unchanged) on conflicts.
    """
    wt = find_worktree(workspace, name)
    root = _root(workspace)
    commit = commit_worktree(wt, f"vtcode subagent {wt.name}: changes from its worktree")
    proc = git([*_identity(root), "merge", "--no-ff", "--no-edit", wt.branch], root,
               timeout=GIT_OP_TIMEOUT_SECS)  # fmt: skip
    if proc is None:
        raise WorktreeError("git merge: git is not available (or timed out)")
    if proc.returncode != 0:
        conflicts = git(["diff", "--name-only", "--diff-filter=U"], root, check=True)
        files = [f for f in (conflicts.stdout.split("\n") if conflicts else []) if f]
        git(["merge", "--abort"], root)
        if files:
            raise MergeConflictError(
                f"merging {wt.name} conflicts in: {', '.join(files)}; the merge was aborted and "
                "your tree is unchanged",
                hint=f"resolve by hand: git merge {wt.branch} (the worktree is kept)",
            )
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        detail = " ".join(lines[-2:]) if lines else f"git exited {proc.returncode}"
        hint = "commit or stash your own changes first (the worktree is kept)"
        if "internal merge" in proc.stderr:  # a merge driver vtcode's git never runs
            hint = (
                "a file's merge attribute names a driver from the repository's config "
                f"(merge.<name>.driver), which vtcode never runs: git merge {wt.branch} by hand "
                "(the worktree is kept)"
            )
        raise WorktreeError(f"git merge {wt.branch} refused: {detail}", hint=hint)
    merged = _run(["rev-parse", "HEAD"], root, "git rev-parse").strip()
    adopted: list[str] = []
    if not keep:
        adopted = _remove(wt, workspace, root, delete_branch=True)
    return {
        "name": wt.name,
        "branch": wt.branch,
        "worktree_commit": commit,
        "merge_commit": merged,
        "removed": not keep,
        "sessions_adopted": adopted,
    }


def _remove(wt: Worktree, workspace: Path, root: Path, *, delete_branch: bool) -> list[str]:
    adopted = adopt_sessions(wt, workspace)
    _run(["worktree", "remove", "--force", str(wt.path)], root, "git worktree remove")
    if wt.path.exists() and not wt.path.is_symlink():  # git leaves ignored files behind
        shutil.rmtree(wt.path)
    if delete_branch and wt.branch.startswith(BRANCH_PREFIX):
        git(["branch", "-D", wt.branch], root)
    return adopted


def drop_worktree(workspace: Path, name: str) -> dict[str, object]:
    """Discard the worktree and its branch (uncommitted child changes are lost; sessions kept)."""
    wt = find_worktree(workspace, name)
    root = _root(workspace)
    adopted = _remove(wt, workspace, root, delete_branch=True)
    return {"name": wt.name, "branch": wt.branch, "removed": True, "sessions_adopted": adopted}
