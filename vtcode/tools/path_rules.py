"""Workspace-relative path globs for the permission rules (`read_file(src/**)`, `*.lock`): a
gitignore-style match, and the normal form a tool's path argument is matched in."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path


@functools.lru_cache(maxsize=512)
def _path_regex(pattern: str) -> re.Pattern[str]:
    pat = pattern.strip()
    while pat.startswith("./"):
        pat = pat[2:]
    anchored = "/" in pat.rstrip("/")
    pat = pat.lstrip("/")
    if pat.endswith("/"):
        pat += "**"
    out = []
    i = 0
    while i < len(pat):
        if pat.startswith("/**", i) and i + 3 == len(pat):
            out.append("(?:/.*)?")  # `src/**` matches src itself and everything below
            i += 3
        elif pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif pat[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pat[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pat[i]))
            i += 1
    body = "".join(out)
    return re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.DOTALL)


def path_glob_match(pattern: str, rel_path: str) -> bool:
    """gitignore-style match of a workspace-relative POSIX path (see the module docstring)."""
    rel = rel_path.strip()
    while rel.startswith("./"):
        rel = rel[2:]
    if pattern.strip() in ("*", "**"):
        return True
    return _path_regex(pattern).match(rel.rstrip("/") or ".") is not None


def normalise_path(value: str, workspace: Path | None) -> str:
    if workspace is not None:
        root = Path(os.path.normpath(workspace.absolute()))
        p = Path(value)
        full = Path(os.path.normpath(p if p.is_absolute() else root / p))
        if full == root:
            return "."
        if full.is_relative_to(root):
            return full.relative_to(root).as_posix()
        return full.as_posix()
    return os.path.normpath(value).replace(os.sep, "/")
