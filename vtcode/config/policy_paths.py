"""The policy-bearing paths: what a run may never change about the rules that govern it.

A change to policy comes from the user, never from the run it governs (issue 23, item 5). These
are the paths whose content decides what vtcode or git will let a later run do, or what runs
outside the sandbox:

- `vtcode.toml` at the workspace root (the workspace config: sandbox mode, network, permissions,
  hooks, MCP servers). Compared case-insensitively, so `VTCODE.toml` on a case-insensitive file
  system (where it *is* the workspace config) is covered as well.
- `.vtcode/` at the workspace root: vtcode's state (sessions, notes, decisions, loop state, the
  steering inbox, spools); a planted file there is read by the next run as vtcode's own.
- `.git/` at any depth (nested repositories, submodules): `config` (core.fsmonitor,
  core.hooksPath, filters, aliases) and `hooks/` run programs for vtcode's own git calls and
  for the user's next `git` command.
- the user's config file and `VTCODE_HOME` (the trust store, hook fingerprints): outside the
  workspace; listed so the sandbox can keep them read-only wherever they live.

Deliberately not listed: `AGENTS.md` and other instruction files are content the model may be
asked to edit, and they grant nothing (a prompt cannot loosen the sandbox or the permission
rules). vtcode loads no skills (`.agents/`) and no `.vtcode.toml`; if it ever does, they join
this list.

The file tools refuse every workspace entry here in every mode (`vtcode.tools.paths`); the OS
sandbox makes the same paths read-only for commands (`workspace_paths`, `user_paths`);
docs/security.md lists `POLICY_PATHS`. One list, so the three never disagree.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vtcode.config.load import WORKSPACE_FILE, user_config_path

__all__ = [
    "POLICY_PATHS",
    "WORKSPACE_FILE",
    "PolicyPath",
    "policy_inodes",
    "protected_entry",
    "user_paths",
    "workspace_paths",
]


@dataclass(frozen=True, slots=True)
class PolicyPath:
    """One policy-bearing workspace entry: `name`, found at the root only or at any depth."""

    name: str
    any_depth: bool
    why: str

    def matches(self, part: str) -> bool:
        """Whether a path component names this entry (`vtcode.toml` in any letter case)."""
        if self.name == WORKSPACE_FILE:
            return part.casefold() == WORKSPACE_FILE
        return part == self.name


POLICY_PATHS: tuple[PolicyPath, ...] = (
    PolicyPath(WORKSPACE_FILE, False, "the workspace config (sandbox, permissions, hooks)"),
    PolicyPath(".vtcode", False, "vtcode's own state (sessions, notes, loop state)"),
    PolicyPath(".git", True, "git's config and hooks run programs for every later git call"),
)


def protected_entry(parts: tuple[str, ...]) -> tuple[PolicyPath, int] | None:
    """The policy path that workspace-relative `parts` lie in (or name), with the index of the
    component that matched; None when the path bears no policy."""
    for index, part in enumerate(parts):
        for entry in POLICY_PATHS:
            if (entry.any_depth or index == 0) and entry.matches(part):
                return entry, index
    return None


def workspace_paths(workspace: Path) -> list[Path]:
    """The policy paths that exist at the top of `workspace`, as absolute paths (every letter
    case of `vtcode.toml` present). `.git/` folders below the top are not searched for: the
    sandbox gets the top ones; the file tools match every depth by name."""
    root = Path(os.path.realpath(workspace))
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    return sorted(p for p in entries if any(e.matches(p.name) for e in POLICY_PATHS))


def user_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """The user's config file and vtcode's home folder (`VTCODE_HOME`, else the folder that
    holds the user config), whether or not they exist yet."""
    env = os.environ if env is None else env
    config = user_config_path(env)
    out: list[Path] = []
    home = env.get("VTCODE_HOME")
    if home:
        out.append(Path(home))
    if config is not None:
        out.extend(p for p in (config.parent, config) if p not in out)
    return out


def policy_inodes(workspace: Path) -> frozenset[tuple[int, int]]:
    """(st_dev, st_ino) of the policy files a hard link could alias: the workspace config (any
    case) and the top repository's `.git/config`. A name with more than one link whose inode is
    in this set is the policy file under another name."""
    root = Path(os.path.realpath(workspace))
    found: set[tuple[int, int]] = set()
    candidates = [p for p in workspace_paths(root) if p.name != ".vtcode" and p.name != ".git"]
    candidates.append(root / ".git" / "config")
    for path in candidates:
        try:
            st = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.add((st.st_dev, st.st_ino))
    return frozenset(found)
