"""Skills: `SKILL.md` folders (the format Codex, Claude Code and upstream share), listed in the
system prompt by name and description so the model can read one when it needs it.

Where: `.agents/skills/<name>/SKILL.md` in the repository root (`instructions.project_root`) and
`skills/<name>/SKILL.md` in vtcode's home (`$VTCODE_HOME`). A SKILL.md starts with YAML front
matter holding `name` and `description` (one line each here; quotes stripped); a folder without
them is skipped with a warning. Only the list goes into the prompt, within a budget (about 2 %
of the context window, at 4 bytes a token): the model reads a skill's file with `read_file`
when it uses it. A repository's skills are content, like its AGENTS.md: nothing in them changes
a permission, the sandbox or a hook, and a skill folder or file that is a symlink out of the
repository is skipped (its text would go to the provider).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path

from vtcode.orient.instructions import project_root, user_home
from vtcode.ownfile import read_own_prefix

__all__ = ["Skill", "Skills", "discover_skills", "skills_budget"]

SKILL_FILE = "SKILL.md"
PROJECT_DIR = Path(".agents") / "skills"
MAX_SKILL_READ = 64 * 1024  # front matter is at the top: the rest is never read here
MAX_SKILLS = 256


@dataclasses.dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    path: Path  # the SKILL.md, absolute
    label: str  # as shown: repository-relative, or $VTCODE_HOME/skills/...
    scope: str  # project | user

    def to_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "description": self.description,
            "path": str(self.path),
            "label": self.label,
            "scope": self.scope,
        }


@dataclasses.dataclass(frozen=True, slots=True)
class Skills:
    skills: tuple[Skill, ...] = ()
    warnings: tuple[str, ...] = ()

    def section(self, budget: int) -> str | None:
        """The prompt's skills list within `budget` bytes (None when there is no skill)."""
        if not self.skills:
            return None
        head = (
            "# Skills\nFolders of instructions for particular tasks. When a task matches a "
            "skill, read its SKILL.md with read_file first and follow it."
        )
        lines = [head]
        used = len(head.encode())
        for i, s in enumerate(self.skills):
            line = f"- {s.name}: {s.description} ({s.label})"
            if used + len(line.encode()) + 1 > budget:
                lines.append(f"- ... {len(self.skills) - i} more skill(s) not listed")
                break
            lines.append(line)
            used += len(line.encode()) + 1
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {"skills": [s.to_json() for s in self.skills], "warnings": list(self.warnings)}


def skills_budget(context_tokens: int) -> int:
    """Bytes of the prompt's skills list: ~2 % of the context window (4 bytes a token)."""
    return max(1024, context_tokens * 4 // 50)


def _front_matter(text: str) -> dict[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return out
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("name", "description") and not line.startswith((" ", "\t")):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out[key.strip()] = " ".join(value.split())
    return {}  # no closing line: not front matter


def _inside(path: Path, root_real: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real.rstrip("/") + "/")


def _scan(
    base: Path, label_base: str, scope: str, confine: str | None, out: list[Skill], warn: list[str]
) -> None:
    try:
        entries = sorted(e.name for e in os.scandir(base))
    except OSError:
        return
    for name in entries:
        if len(out) >= MAX_SKILLS:
            warn.append(f"skills: more than {MAX_SKILLS}; the rest are not listed")
            return
        path = base / name / SKILL_FILE
        label = f"{label_base}/{name}/{SKILL_FILE}"
        if not os.path.lexists(path):
            continue
        if confine is not None and not _inside(path, confine):
            warn.append(f"skills: skipped {label}: a symlink out of the repository")
            continue
        try:
            data = read_own_prefix(os.path.realpath(path), MAX_SKILL_READ)
        except OSError as e:
            warn.append(f"skills: skipped {label}: {e.strerror or e}")
            continue
        meta = _front_matter(data.decode("utf-8", "replace"))
        if not meta.get("name") or not meta.get("description"):
            warn.append(f"skills: skipped {label}: no name and description in its front matter")
            continue
        out.append(Skill(meta["name"], meta["description"], path, label, scope))


def discover_skills(workspace: Path, *, env: Mapping[str, str] | None = None) -> Skills:
    """The project's skills, then the user's (a user skill of the same name as a project one is
    listed too: the label tells them apart)."""
    found: list[Skill] = []
    warnings: list[str] = []
    root = project_root(workspace)
    # shown relative to the workspace (the folder read_file paths are relative to), or in full
    # when the repository root lies above it
    base = root / PROJECT_DIR
    shown = (
        os.path.relpath(base, workspace.absolute()) if root == workspace.absolute() else str(base)
    )
    _scan(base, shown, "project", os.path.realpath(root), found, warnings)
    home = user_home(env)
    if home is not None:
        # the full path: the model reads a user skill from outside the workspace by it
        _scan(home / "skills", str(home / "skills"), "user", None, found, warnings)
    return Skills(tuple(found), tuple(warnings))
