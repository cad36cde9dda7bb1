"""A task's workspace: materialise its setup, lay the reference over it, run its check, and
fingerprint the files it protects.

The checker files (every top-level entry of the task folder but task.toml, `reference/`, the
setup folder and the replay script) are not in the workspace while the agent works: they are
copied in just before the check and removed after it (a workspace file of the same name is set
aside and put back), so what the agent left is what a person inspects later.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from vtcode.eval.proc import run_bounded, tail_text
from vtcode.eval.task import Task, TaskError
from vtcode.gitsafe import CLONE_TRANSPORTS, git_argv, git_env

__all__ = [
    "CheckResult",
    "apply_reference",
    "check_argv",
    "keep_folder",
    "materialize",
    "protected_digest",
    "run_check",
    "task_env",
]

SETUP_COMMAND_TIMEOUT = 600.0
OUTPUT_TAIL = 4000


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """The checker's verdict: `passed` only for exit 0 within the time limit."""

    passed: bool
    exit_code: int | None
    timed_out: bool
    seconds: float
    output: str  # the last OUTPUT_TAIL bytes of stdout + stderr


def _run_setup(
    task: Task, argv: list[str], dest: Path, what: str, env: Mapping[str, str] | None = None
) -> None:
    with tempfile.TemporaryDirectory(prefix="vtcode-eval-") as tmp:
        log = Path(tmp) / "out"
        res = run_bounded(
            argv,
            cwd=dest,
            env=task_env(task, dest) if env is None else env,
            timeout=SETUP_COMMAND_TIMEOUT,
            stdout=log,
        )
        if res.exit_code != 0:
            why = res.error or ("timed out" if res.timed_out else f"exit {res.exit_code}")
            raise TaskError(
                f"{what} failed ({why}): {' '.join(argv)}\n{tail_text(log, 1000)}".rstrip(),
                location=str(task.folder / "task.toml"),
            )


def _clone(task: Task, dest: Path) -> None:
    git = task.spec.setup.git
    assert git is not None
    local = task.folder / git.repo
    repo = str(local) if local.exists() else git.repo
    env = git_env()  # vtcode's own git (vtcode/gitsafe.py): nothing a repository names runs
    clone = ["clone", "--quiet", "--no-checkout", repo, str(dest)]
    _run_setup(task, git_argv(clone, transports=CLONE_TRANSPORTS), dest.parent, "git clone", env)
    ref = git.ref or "HEAD"
    _run_setup(task, git_argv(["checkout", "--quiet", "--detach", ref, "--"]), dest,
               f"git checkout {ref}", env)  # fmt: skip


def _fresh(dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise TaskError("the workspace must be a new or empty folder", location=str(dest))
    dest.mkdir(parents=True, exist_ok=True)


def materialize(task: Task, dest: Path) -> None:
    """Make `dest` (new or empty) the task's starting workspace: its setup, then its commands.

    A folder is copied with symlinks kept as links (never followed out of the task); inline
    files are written as UTF-8; a git repository is cloned by vtcode's own git (gitsafe) and its
    ref checked out detached."""
    setup = task.spec.setup
    dest = dest.absolute()
    if setup.git is not None:
        if dest.exists():
            _fresh(dest)
            dest.rmdir()
        dest.parent.mkdir(parents=True, exist_ok=True)
        _clone(task, dest)
    else:
        _fresh(dest)
    if setup.dir is not None:
        _copy_tree(task.folder / setup.dir, dest)
    for name, text in (setup.files or {}).items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for argv in setup.commands:
        _run_setup(task, argv, dest, "a setup command")


def apply_reference(task: Task, dest: Path) -> None:
    """Copy the task's `reference/` over the workspace (what a correct agent would leave)."""
    ref = task.reference_dir
    if not ref.is_dir():
        raise TaskError("the task has no reference/ folder", location=str(task.folder))
    _copy_tree(ref, dest)


def task_env(task: Task, dest: Path) -> dict[str, str]:
    """The environment of setup commands and checks: ours, plus where the task folder and the
    workspace are (VTCODE_EVAL_TASK_DIR, VTCODE_EVAL_WORKSPACE)."""
    return {
        **os.environ,
        "VTCODE_EVAL_TASK_DIR": str(task.folder),
        "VTCODE_EVAL_WORKSPACE": str(dest.absolute()),
    }


def check_argv(task: Task) -> list[str]:
    """The check's argv with `{task_dir}` replaced by the task folder."""
    return [a.replace("{task_dir}", str(task.folder)) for a in task.spec.check]


def _checker_entries(task: Task) -> list[Path]:
    private = task.private_names()
    return sorted(p for p in task.folder.iterdir() if p.name not in private)


def _copy_file(src: str, dst: str) -> None:
    """copytree's file copier: regular files only (a FIFO or device in a task folder would
    block the copy or read a device), symlinks as links."""
    st = os.lstat(src)
    if stat.S_ISLNK(st.st_mode):
        Path(dst).symlink_to(Path(src).readlink())
    elif not stat.S_ISREG(st.st_mode):
        raise TaskError("only regular files, folders and symlinks can be copied", location=src)
    else:
        shutil.copy2(src, dst, follow_symlinks=False)


def _copy_kept(src: str, dst: str) -> None:
    """Copy what an agent left, whatever it is, without ever opening anything but a regular
    file: a FIFO is made anew, a socket or device is left out."""
    st = os.lstat(src)
    if stat.S_ISLNK(st.st_mode):
        Path(dst).symlink_to(Path(src).readlink())
    elif stat.S_ISREG(st.st_mode):
        shutil.copy2(src, dst, follow_symlinks=False)
    elif stat.S_ISFIFO(st.st_mode):
        os.mkfifo(dst, stat.S_IMODE(st.st_mode))


def keep_folder(src: Path, dest: Path) -> None:
    """Move a finished run's folder to where it is kept: a rename on one file system, else a
    copy that never blocks on a FIFO the agent made (then the original is removed)."""
    try:
        src.rename(dest)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    shutil.copytree(src, dest, symlinks=True, copy_function=_copy_kept)
    shutil.rmtree(src, ignore_errors=True)


def _copy_tree(src: Path, dest: Path) -> None:
    """`src`'s contents into `dest` (merged), symlinks kept as links, special files refused."""
    shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True, copy_function=_copy_file)


def _copy(src: Path, dst: Path) -> None:
    if src.is_dir() and not src.is_symlink():
        shutil.copytree(src, dst, symlinks=True, copy_function=_copy_file)
    else:
        _copy_file(str(src), str(dst))


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


@contextmanager
def _checker_files(task: Task, dest: Path) -> Iterator[None]:
    """The checker files in the workspace for the duration of the check."""
    with tempfile.TemporaryDirectory(prefix="vtcode-eval-aside-") as aside:
        moved: list[tuple[Path, Path]] = []
        placed: list[Path] = []
        try:
            for src in _checker_entries(task):
                target = dest / src.name
                if target.exists() or target.is_symlink():
                    keep = Path(aside) / src.name
                    shutil.move(target, keep)
                    moved.append((keep, target))
                _copy(src, target)
                placed.append(target)
            yield
        finally:
            for target in placed:
                _remove(target)
            for keep, target in moved:
                shutil.move(keep, target)


def run_check(task: Task, dest: Path) -> CheckResult:
    """Run the check argv in the workspace (checker files copied in, `{task_dir}` replaced,
    VTCODE_EVAL_TASK_DIR set), bounded by check_timeout. Exit 0 is a pass."""
    dest = dest.absolute()
    with tempfile.TemporaryDirectory(prefix="vtcode-eval-check-") as tmp:
        log = Path(tmp) / "output"
        with _checker_files(task, dest):
            res = run_bounded(
                check_argv(task),
                cwd=dest,
                env=task_env(task, dest),
                timeout=task.spec.check_timeout,
                stdout=log,
            )
        output = tail_text(log, OUTPUT_TAIL)
    if res.error:
        output = f"{res.error}\n{output}".rstrip("\n")
    return CheckResult(
        passed=res.exit_code == 0 and not res.timed_out,
        exit_code=res.exit_code,
        timed_out=res.timed_out,
        seconds=round(res.seconds, 3),
        output=output,
    )


def _file_digest(path: Path) -> str:
    """sha256 of a regular file's bytes; a symlink by its target text, anything else (a FIFO,
    a socket, a device) by its type alone: never followed, never read, so a hostile workspace
    cannot hang or redirect the fingerprint."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "symlink:" + str(path.readlink())
    if not stat.S_ISREG(st.st_mode):
        return f"special:{stat.S_IFMT(st.st_mode):o}"
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    finally:
        os.close(fd)
    return "sha256:" + h.hexdigest()


def _walk(path: Path) -> Iterator[Path]:
    if path.is_dir() and not path.is_symlink():
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                yield Path(root) / name
    else:
        yield path


def protected_digest(task: Task, dest: Path) -> Mapping[str, str]:
    """{relative path: digest} of every file the `protect` globs match (folders expanded).
    Equal before and after the agent means no protected file was changed, added or removed."""
    dest = dest.absolute()
    out: dict[str, str] = {}
    for pattern in task.spec.protect:
        for match in sorted(dest.glob(pattern)):
            for path in _walk(match):
                rel = path.relative_to(dest).as_posix()
                try:
                    out[rel] = _file_digest(path)
                except OSError as exc:
                    out[rel] = f"unreadable:{exc.errno}"
    return dict(sorted(out.items()))
