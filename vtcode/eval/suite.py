"""Loading a suite: a folder of task folders, each with a task.toml (docs/eval.md).

`load_suite` is the one entry point: it reads every task strictly (a bad file is a `TaskError`,
exit 2 through the CLI, located as file:line:col with the key path) and returns the tasks sorted
by id. The workspace side (materialise, reference, check, protected files) is in `workspace.py`
and re-exported here, so `vtcode.eval.suite` is the whole API a suite's own tests need.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vtcode.errors import InvalidIdError
from vtcode.eval.task import GitSetup, Task, TaskError, TaskSetup, TaskSpec
from vtcode.eval.workspace import (
    CheckResult,
    apply_reference,
    materialize,
    protected_digest,
    run_check,
)
from vtcode.ids import check_id
from vtcode.tomlcheck import Locator, decode_toml

__all__ = [
    "CheckResult",
    "GitSetup",
    "Suite",
    "Task",
    "TaskError",
    "TaskSetup",
    "TaskSpec",
    "apply_reference",
    "load_suite",
    "load_task",
    "materialize",
    "protected_digest",
    "run_check",
]

TASK_FILE = "task.toml"
MAX_TASK_BYTES = 1024 * 1024
MAX_ID_LEN = 96  # room for the agent and repetition in run keys and session ids


@dataclass(frozen=True, slots=True, kw_only=True)
class Suite:
    """A loaded suite: its folder and its tasks, sorted by id."""

    path: Path
    tasks: tuple[Task, ...]

    @property
    def name(self) -> str:
        return self.path.name

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)


def _error(message: str, location: str, hint: str | None) -> TaskError:
    return TaskError(message, location=location, hint=hint)


def _relative(value: str, loc: Locator, path: tuple[str | int, ...], what: str) -> None:
    """A path inside the folder it is relative to: not empty, not absolute, no `..`."""
    p = PurePosixPath(value)
    if not value.strip() or p.is_absolute() or ".." in p.parts or "\\" in value:
        raise loc.error(path, f"{what} must be a relative path inside it, without '..': {value!r}")
    if p.parts in ((), (".",)):
        raise loc.error(path, f"{what} must name something inside the folder, not the folder")


def _inside(folder: Path, rel: str) -> bool:
    """`folder/rel` resolves (symlinks followed) inside `folder`."""
    try:
        return (folder / rel).resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False


def _check_spec(spec: TaskSpec, folder: Path, loc: Locator) -> None:
    if spec.id != folder.name:
        raise loc.error(("id",), f"the id {spec.id!r} differs from the folder name {folder.name!r}")
    try:
        check_id(spec.id, "task id")
    except InvalidIdError as exc:
        raise loc.error(("id",), exc.message, hint=exc.hint) from None
    if len(spec.id) > MAX_ID_LEN:
        raise loc.error(("id",), f"a task id is at most {MAX_ID_LEN} characters")
    if not spec.prompt.strip():
        raise loc.error(("prompt",), "the prompt is empty")
    if "\x00" in spec.prompt:
        raise loc.error(("prompt",), "the prompt contains a NUL byte (no agent can be given it)")
    if not spec.check or not spec.check[0].strip():
        raise loc.error(("check",), "the check needs a program (a non-empty argv)")
    for key, value in (("timeout", spec.timeout), ("check_timeout", spec.check_timeout)):
        if not 0 < value <= 86_400:
            raise loc.error((key,), f"{value} seconds is not in (0, 86400]")
    for i, pattern in enumerate(spec.protect):
        _relative(pattern, loc, ("protect", i), "a protected glob")
    if spec.script is not None:
        _relative(spec.script, loc, ("script",), "the script")
        if not (folder / spec.script).is_file() or not _inside(folder, spec.script):
            raise loc.error(("script",), f"no replay script {spec.script!r} in the task folder")
    _check_setup(spec.setup, folder, loc)


def _check_setup(setup: TaskSetup, folder: Path, loc: Locator) -> None:
    given = [k for k in ("dir", "files", "git") if getattr(setup, k) is not None]
    if len(given) != 1:
        raise loc.error(
            ("setup",),
            f"[setup] needs exactly one of dir, files, git (has {', '.join(given) or 'none'})",
        )
    if setup.dir is not None:
        _relative(setup.dir, loc, ("setup", "dir"), "the setup folder")
        if not (folder / setup.dir).is_dir() or not _inside(folder, setup.dir):
            raise loc.error(("setup", "dir"), f"no folder {setup.dir!r} in the task folder")
        if PurePosixPath(setup.dir).parts[0] == "reference":
            raise loc.error(("setup", "dir"), "the setup folder cannot be the reference")
    for name in setup.files or {}:
        _relative(name, loc, ("setup", "files", name), "a setup file")
    if setup.git is not None and not setup.git.repo.strip():
        raise loc.error(("setup", "git", "repo"), "the repository is empty")
    for i, argv in enumerate(setup.commands):
        if not argv or not argv[0].strip():
            raise loc.error(("setup", "commands", i), "a command needs a program (non-empty argv)")


def load_task(folder: Path) -> Task:
    """Read and check `folder/task.toml`."""
    folder = folder.absolute()
    path = folder / TASK_FILE
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_TASK_BYTES + 1)
    except OSError as exc:
        raise TaskError(f"cannot read the task: {exc.strerror}", location=str(path)) from None
    if len(raw) > MAX_TASK_BYTES:
        raise TaskError(f"task.toml is larger than {MAX_TASK_BYTES} bytes", location=str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TaskError(f"not UTF-8 (byte {exc.start})", location=f"{path}:1:1") from None
    spec, _, loc = decode_toml(TaskSpec, text, source=str(path), make_error=_error)
    _check_spec(spec, folder, loc)
    return Task(spec=spec, folder=folder)


def load_suite(path: Path) -> Suite:
    """Every task of a suite folder, sorted by id.

    A task folder is a sub-folder with a task.toml; other sub-folders and files are ignored (a
    README, shared data). `path` may also be one task folder: a suite of one.
    """
    path = Path(path).absolute()
    if not path.is_dir():
        raise TaskError("not a suite folder", location=str(path))
    if (path / TASK_FILE).is_file():
        return Suite(path=path, tasks=(load_task(path),))
    folders = sorted(p for p in path.iterdir() if p.is_dir() and (p / TASK_FILE).is_file())
    if not folders:
        raise TaskError(
            "no task in this folder", location=str(path), hint="each task is DIR/<id>/task.toml"
        )
    tasks = sorted((load_task(p) for p in folders), key=lambda t: t.id)
    return Suite(path=path, tasks=tuple(tasks))
