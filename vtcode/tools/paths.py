"""Workspace confinement as path strings: the protected names, and `resolve_path`.

Writes may not touch the policy-bearing paths (`vtcode.config.policy_paths`: `vtcode.toml`,
`.vtcode/`, any `.git/`), in any mode (`refuse_protected`).
`resolve_path` checks a path string by `realpath` (symlinks followed, `..` collapsed): it serves
exec_command's `workdir`, which is handed to a child process as a string anyway. The file tools
never use it: a string checked and then opened can be swapped in between, so they open through
`vtcode.tools.beneath` (folder fds, openat2 RESOLVE_BENEATH) instead.
"""

from __future__ import annotations

import os
from pathlib import Path

from vtcode.config.policy_paths import WORKSPACE_FILE, protected_entry
from vtcode.tools.base import ToolError


def workspace_root(workspace: Path) -> Path:
    """The canonical workspace folder (resolved once per call; cheap)."""
    return workspace.resolve()


def resolve_path(
    workspace: Path,
    raw: str,
    *,
    write: bool = False,
    must_exist: bool = False,
    what: str = "path",
) -> Path:
    """Resolve `raw` inside `workspace`, or raise `ToolError` saying why it is refused.

    `write=True` also refuses `.vtcode/` at the top and `.git/` anywhere. `must_exist` turns a
    missing target into a clear "no such file" error instead of a later OSError.
    """
    if not isinstance(raw, str) or raw == "":
        raise ToolError(f"{what} must be a non-empty string")
    if "\x00" in raw:
        raise ToolError(f"{what} {raw!r} contains a NUL byte")
    root = workspace_root(workspace)
    given = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    candidate = given if given.is_absolute() else root / given
    lexical = Path(os.path.normpath(candidate))
    if not _inside(lexical, root):
        raise ToolError(
            f"{what} {raw!r} is outside the workspace ({root})",
            # `..` escapes and absolute paths elsewhere end up here
        )
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise ToolError(f"{what} {raw!r} cannot be resolved: {exc}") from exc
    if not _inside(resolved, root):
        raise ToolError(
            f"{what} {raw!r} resolves through a symlink to {resolved}, outside the workspace"
        )
    if write:
        for parts in (_rel_parts(lexical, root), _rel_parts(resolved, root)):
            refuse_protected(parts, raw, what)
    if must_exist and not resolved.exists():
        raise ToolError(f"{what} {raw!r} does not exist")
    return resolved


def relative(workspace: Path, path: Path) -> str:
    """`path` as a workspace-relative POSIX string (`.` for the root itself)."""
    root = workspace_root(workspace)
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    text = rel.as_posix()
    return text or "."


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _rel_parts(path: Path, root: Path) -> tuple[str, ...]:
    try:
        return path.relative_to(root).parts
    except ValueError:
        return ()


_WHY = "a change to policy comes from the user, never from the run it governs"


def refuse_protected(parts: tuple[str, ...], raw: str, what: str) -> None:
    """ToolError if workspace-relative `parts` name or lie in a policy-bearing path."""
    found = protected_entry(parts)
    if found is None:
        return
    entry, index = found
    if entry.name == WORKSPACE_FILE:
        where = "/".join(parts[: index + 1])
        raise ToolError(
            f"{what} {raw!r} is the workspace config ({where}), which tools may not modify: {_WHY}"
        )
    if entry.any_depth:
        raise ToolError(
            f"{what} {raw!r} is inside a {entry.name}/ folder, which tools may not modify: {_WHY}"
        )
    raise ToolError(f"{what} {raw!r} is inside {entry.name}/, which tools may not modify: {_WHY}")
