"""The command's mount namespace: a fresh /proc, and the policy paths read-only.

Landlock grants write access to whole folders (the workspace, the temp dirs) and cannot take a
part back, so the files that decide what vtcode and git will do next are made read-only with
bind mounts in the command's own mount namespace (vtcode and the user see no change):

- the user config folder and VTCODE_HOME (config.toml, trust.json), wherever they live;
- the workspace's `vtcode.toml` and `.vtcode/`;
- in every git folder the workspace uses (its `.git`, a linked worktree's git folder and the
  main one it names, submodules under `modules/`): `config`, `config.worktree`, `hooks/`,
  `info/`, `commondir`, and a linked worktree's or a submodule's `.git` file (the pointer to its
  git folder).

A mount point cannot be renamed or removed (EBUSY), so each of them, the workspace itself and
each git folder (bound onto themselves, still writable) cannot be swapped for a planted copy.
What does not exist when the command starts cannot be bound: `hooks/`, `info/` and the
VTCODE_HOME folder are created first (empty, harmless); an absent `vtcode.toml`, git `config`,
`config.worktree` or `commondir` can be created while the command runs, and is removed as soon
as it has ended (`remove_planted`, called by the exec session).

`plan` runs in vtcode and only reads; `apply` runs in the child between fork and exec, through
the preloaded libc and nothing else.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vtcode.config.load import user_config_path
from vtcode.config.policy_paths import WORKSPACE_FILE, user_paths, workspace_paths
from vtcode.ownfile import read_own, read_own_prefix

__all__ = ["MountPlan", "apply", "plan", "policy_paths", "remove_planted"]

_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_NOATIME = 1024
_MS_NODIRATIME = 2048
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_RELATIME = 1 << 21
# statvfs f_flag -> the mount flag a read-only remount must keep (the kernel refuses to clear
# a locked nosuid/nodev/noexec/atime flag inside a user namespace).
_KEEP = ((2, _MS_NOSUID), (4, _MS_NODEV), (8, _MS_NOEXEC), (1024, _MS_NOATIME),
         (2048, _MS_NODIRATIME), (4096, _MS_RELATIME))  # fmt: skip
_GIT_POLICY = ("config", "config.worktree", "hooks", "info", "commondir")
_GIT_CREATE = ("hooks", "info")  # folders made first when absent (git ignores them empty)
# One `path = sub/dir` line of `.gitmodules` (keys are case-insensitive to git). Within the line
# only: `\s` here let `^\s*` and `(.+?)\s*$` run across a repository's blank lines, quadratic
# in them (0.6 s for 20,000 newlines, on every sandboxed command).
_MODULE_PATH = re.compile(r"^[ \t]*path[ \t]*=[ \t]*([^\n]*)", re.MULTILINE | re.IGNORECASE)
_SKIP_WALK = {"objects", "refs", "logs", "lfs"}
# Absent policy files a command could create (no mount can cover a name that does not exist):
# removed when the command ends (`remove_planted`).
_PLANTABLE = {"vtcode.toml", "config", "config.worktree", "commondir"}


@dataclass(frozen=True, slots=True)
class MountPlan:
    """Byte paths for the child: folders bound onto themselves, then paths bound read-only."""

    pins: tuple[bytes, ...]
    readonly: tuple[bytes, ...]
    absent: tuple[Path, ...] = ()  # policy files that did not exist: removed if planted


def _git_folders(workspace: Path) -> tuple[list[Path], list[Path]]:
    """(the git folders the workspace uses, pointer files) — its own, a worktree's, the main."""
    for folder in (workspace, *workspace.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir() and not dotgit.is_symlink():
            return [dotgit], []
        if dotgit.is_file():
            try:
                text = read_own(dotgit, 4096).decode(errors="replace").strip()
            except OSError:
                return [], [dotgit]
            if not text.startswith("gitdir:"):
                return [], [dotgit]
            gitdir = (folder / text.removeprefix("gitdir:").strip()).resolve()
            dirs = [gitdir]
            with contextlib.suppress(OSError):
                common = read_own(gitdir / "commondir", 4096).decode(errors="replace").strip()
                dirs.append((gitdir / common).resolve())
            return dirs, [dotgit]
    return [], []


def _submodule_git_folders(gitdir: Path) -> Iterable[Path]:
    """Git folders under `modules/` (a submodule's config and hooks run like the main ones)."""
    root = gitdir / "modules"
    if not root.is_dir():
        return
    for here, dirs, files in os.walk(root):
        if "HEAD" in files and "config" in files:
            yield Path(here)
        dirs[:] = [d for d in dirs if d not in _SKIP_WALK]


def _submodule_pointers(workspace: Path) -> list[Path]:
    """Each submodule's `.git` file (`gitdir: ...`), named by the workspace's `.gitmodules`:
    rewritten, it would send the next git run in that submodule to a planted git folder."""
    try:
        raw = read_own_prefix(
            workspace / ".gitmodules", 1_000_000
        )  # a FIFO: refused, not waited on
        text = raw.decode(errors="replace")
    except OSError:
        return []
    found = (m.group(1).strip().strip('"') for m in _MODULE_PATH.finditer(text))
    return [p for p in (workspace / f / ".git" for f in found if f) if _is_file(p)]


def _is_file(path: Path) -> bool:
    """`is_file`, False where the name cannot be looked up (a `.gitmodules` path longer than
    the system allows raised ENAMETOOLONG, which stopped every sandboxed command)."""
    try:
        return path.is_file()
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False


def policy_paths(workspace: Path, env: Mapping[str, str]) -> tuple[list[Path], list[Path]]:
    """(folders to pin, paths to make read-only) for commands in `workspace`, absent ones too.

    The workspace and user entries come from `vtcode.config.policy_paths` (the list the file
    tools refuse too); the git folders' policy files from `_GIT_POLICY`.
    """
    gitdirs, pointers = _git_folders(workspace)
    pins = [workspace, *gitdirs]
    readonly = [*user_paths(env), workspace / WORKSPACE_FILE, workspace / ".vtcode"]
    readonly += [p for p in workspace_paths(workspace) if p.name != ".git"]  # VTCODE.toml too
    readonly += pointers + _submodule_pointers(workspace)
    for gitdir in [*gitdirs, *(m for g in gitdirs for m in _submodule_git_folders(g))]:
        readonly += [gitdir / name for name in _GIT_POLICY]
    return pins, list(dict.fromkeys(readonly))


def remove_planted(absent: Iterable[Path]) -> list[Path]:
    """Remove each policy file that was absent when a command started and exists now.

    Called once the command and everything it started have ended (its PID namespace is gone).
    A file, link, FIFO or folder alike: none of them may decide what vtcode or git runs next.
    """
    removed: list[Path] = []
    for path in absent:
        try:
            st = path.lstat()
        except OSError:
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
    return removed


def plan(workspace: Path, env: Mapping[str, str] | None = None) -> MountPlan:
    """What `apply` will mount: existing paths only, real paths, folders created where harmless.

    Called per command, so a folder made or replaced since the last one is bound as it is now.
    """
    env = os.environ if env is None else env
    pins, readonly = policy_paths(workspace, env)
    config = user_config_path(env)
    for path in readonly:
        if path.name in _GIT_CREATE:
            with contextlib.suppress(OSError):
                path.mkdir(mode=0o700)  # only when the parent exists
    for path in user_paths(env):
        if path != config:  # VTCODE_HOME and the config folder: made so they can be bound
            with contextlib.suppress(OSError):
                path.mkdir(mode=0o700, parents=True)
    absent = tuple(p for p in readonly if p.name in _PLANTABLE and not os.path.lexists(p))
    return MountPlan(_existing(pins, folders=True), _existing(readonly, folders=False), absent)


def _existing(paths: Iterable[Path], *, folders: bool) -> tuple[bytes, ...]:
    out: list[bytes] = []
    for path in paths:
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if folders and not real.is_dir():
            continue
        raw = os.fsencode(real)
        if raw not in out:
            out.append(raw)
    return tuple(out)


def _mount(libc: ctypes.CDLL, src: bytes | None, dst: bytes, fstype: bytes | None,
           flags: int) -> None:  # fmt: skip
    if libc.mount(src, dst, fstype, ctypes.c_ulong(flags), None):
        err = ctypes.get_errno()
        raise OSError(err, f"mount {dst.decode(errors='replace')}: {os.strerror(err)}")


def apply(libc: ctypes.CDLL, mplan: MountPlan) -> None:
    """In the child, first process of its PID namespace, in a new mount namespace.

    Nothing propagates back to the host (the whole tree is made private first); /proc is this
    PID namespace's own, so no pid outside it (vtcode's included) can be named.
    """
    _mount(libc, None, b"/", None, _MS_REC | _MS_PRIVATE)
    _mount(libc, b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    for path in mplan.pins:
        _mount(libc, path, path, None, _MS_BIND | _MS_REC)  # submounts stay visible
    for path in mplan.readonly:
        _mount(libc, path, path, None, _MS_BIND)
        keep = 0
        with contextlib.suppress(OSError):
            fflag = os.statvfs(path).f_flag
            keep = sum(ms for st, ms in _KEEP if fflag & st)
        _mount(libc, None, path, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | keep)
    # The working folder was entered before these mounts and still names the folder beneath
    # them: enter it again by path, so relative paths (`.git/config`) meet the mounts too.
    with contextlib.suppress(OSError):
        os.chdir(Path.cwd())
