"""The task format: `evals/<suite>/<task-id>/task.toml`, one set of dataclasses.

The dataclasses are the format (decoded strictly by `vtcode.tomlcheck`: unknown keys are errors
with a did-you-mean, every error located as file:line:col); `Task` adds what the file's place
says (its folder). Semantic checks the types cannot state live in `suite.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from vtcode.errors import UsageError
from vtcode.jsontypes import Doc, IntRange

__all__ = [
    "DEFAULT_CHECK_TIMEOUT",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_TIMEOUT",
    "GitSetup",
    "Task",
    "TaskError",
    "TaskSetup",
    "TaskSpec",
]

DEFAULT_TIMEOUT = 300.0
DEFAULT_MAX_TURNS = 20
DEFAULT_CHECK_TIMEOUT = 120.0


class TaskError(UsageError):
    """A task folder or task.toml is wrong, or its workspace cannot be made (exit 2, located)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GitSetup:
    """`[setup.git]`: clone `repo` (a URL, or a path relative to the task folder); check
    out `ref`."""

    repo: str
    ref: Annotated[str | None, Doc("a branch, tag or commit; default: the clone's HEAD")] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSetup:
    """`[setup]`: exactly one of `dir`, `files`, `git`; then `commands` in the workspace."""

    dir: Annotated[str | None, Doc("a folder, relative to the task folder, copied in")] = None
    files: Annotated[dict[str, str] | None, Doc("relative path -> text")] = None
    git: GitSetup | None = None
    commands: Annotated[
        list[list[str]], Doc("argv lists run in the workspace after materialising")
    ] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSpec:
    """What one task.toml says."""

    id: Annotated[str, Doc("equals the task's folder name")]
    prompt: str
    setup: TaskSetup
    check: Annotated[list[str], Doc("argv run in the workspace after the agent; exit 0 = pass")]
    tags: list[str] = field(default_factory=list)
    timeout: Annotated[float, Doc("seconds for the agent run")] = DEFAULT_TIMEOUT
    max_turns: Annotated[int, IntRange(1, 10_000)] = DEFAULT_MAX_TURNS
    check_timeout: Annotated[float, Doc("seconds for the check")] = DEFAULT_CHECK_TIMEOUT
    protect: Annotated[
        list[str], Doc("globs relative to the workspace that the agent must not change")
    ] = field(default_factory=list)
    script: Annotated[
        str | None, Doc("a replay script (relative to the task folder) for runs with no model")
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """A loaded task: its spec and its folder (absolute)."""

    spec: TaskSpec
    folder: Path

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def script_path(self) -> Path | None:
        return None if self.spec.script is None else self.folder / self.spec.script

    @property
    def reference_dir(self) -> Path:
        return self.folder / "reference"

    def private_names(self) -> set[str]:
        """Top-level names of the task folder that are not checker files: task.toml, the
        reference, the setup folder and the replay script."""
        names = {"task.toml", "reference"}
        if self.spec.setup.dir is not None:
            names.add(Path(self.spec.setup.dir).parts[0])
        if self.spec.script is not None:
            names.add(Path(self.spec.script).parts[0])
        return names
