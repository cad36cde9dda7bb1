"""Where a user-named output file may be written, and how.

Output options (`sessions export -o`, `sessions show --html`, `exec --last-message-file`,
`--record`, `--events`) used to write a temp file and rename it over the target. As root,
`-o /dev/null` then replaced the machine's /dev/null with a regular file, a `/dev/stdout` symlink
became a file, and `--events /nonexistent/x.jsonl` created `/nonexistent`. The rules here:

- `-` is standard output.
- A character device or a FIFO is written through (opened for writing, never created, never
  renamed over): `/dev/null`, `/dev/stdout` onto a pipe or a terminal, a named pipe.
- A path under /dev or /proc that reaches a regular file (`/dev/stdout` when stdout is
  redirected to a file) is appended to through that name: replacing the file would cut the
  shell's redirection off from what it reads.
- A regular file, or a missing one in an existing folder, is replaced atomically (temp file in
  the same folder, fsync, rename), so a crash leaves the old content or the new, never half.
- A symlink is followed only to a regular file (then that file is replaced, the link kept); a
  symlink inside the workspace that leads outside it is refused, because a model may have planted
  it (a sandboxed command can make links it could not write through).
- Anything else (a directory, a socket, a block device, a dangling link) is refused: exit 2.
- A missing parent folder is created only inside the workspace; elsewhere the user must create
  it (a typo must not make folders across the machine).
"""

from __future__ import annotations

import enum
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from vtcode import fsutil
from vtcode.errors import UsageError

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_MAGIC_ROOTS = ("/dev/", "/proc/")


class TargetKind(enum.Enum):
    STDOUT = "stdout"
    THROUGH = "through"  # write to the existing node as it is (device, FIFO, /dev/stdout)
    FILE = "file"  # replace (or create) a regular file atomically


@dataclass(frozen=True, slots=True)
class OutputTarget:
    """A checked output destination."""

    kind: TargetKind
    path: Path | None  # None for STDOUT
    spec: str  # what the user wrote, for messages
    append: bool = False  # THROUGH onto a regular file (via /dev or /proc): append, never truncate

    def describe(self) -> str:
        return "stdout" if self.path is None else str(self.path)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _refuse(spec: str, why: str, hint: str | None = None) -> UsageError:
    return UsageError(f"cannot write here: {why}", location=spec, hint=hint)


def _kind_word(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def check_output(
    spec: str | Path, *, workspace: Path | None = None, base: Path | None = None
) -> OutputTarget:
    """Check `spec` against the rules above; raises `UsageError` (exit 2) when refused.

    `base` resolves a relative path (default: the current directory); `workspace` is where
    missing folders may be created and where a symlink may not lead out of.
    """
    text = str(spec)
    if text == "-":
        return OutputTarget(TargetKind.STDOUT, None, text)
    if not text.strip():
        raise _refuse(text, "an empty path")
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    path = Path(os.path.normpath(path))
    ws = Path(os.path.realpath(workspace)) if workspace is not None else None
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        return OutputTarget(TargetKind.FILE, _ready_parent(path, text, ws), text)
    except OSError as e:
        raise _refuse(text, e.strerror or str(e)) from None
    magic = str(path).startswith(_MAGIC_ROOTS)
    if stat.S_ISLNK(lst.st_mode):
        return _through_link(path, text, ws, magic or _via_magic(path))
    if stat.S_ISREG(lst.st_mode):
        if magic:
            return OutputTarget(TargetKind.THROUGH, path, text, append=True)
        return OutputTarget(TargetKind.FILE, path, text)
    if stat.S_ISCHR(lst.st_mode) or stat.S_ISFIFO(lst.st_mode):
        return OutputTarget(TargetKind.THROUGH, path, text)
    raise _refuse(text, f"{path} is {_kind_word(lst.st_mode)}")


def _via_magic(path: Path, hops: int = 40) -> bool:
    """Whether a symlink chain passes through /proc or /dev (e.g. a link to /proc/self/fd/1)."""
    for _ in range(hops):
        try:
            target = path.readlink()
        except OSError:
            return False
        path = Path(os.path.normpath(path.parent / target))
        if str(path).startswith(_MAGIC_ROOTS):
            return True
    return False


def _through_link(path: Path, text: str, ws: Path | None, magic: bool) -> OutputTarget:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise _refuse(text, f"{path} is a symlink to a missing file") from None
    except OSError as e:
        raise _refuse(text, e.strerror or str(e)) from None
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return OutputTarget(TargetKind.THROUGH, path, text)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(text, f"{path} is a symlink to {_kind_word(st.st_mode)}")
    if magic:  # /dev/stdout -> /proc/self/fd/1 -> the file the shell redirected to
        return OutputTarget(TargetKind.THROUGH, path, text, append=True)
    final = Path(os.path.realpath(path))
    planted = ws is not None and _inside(Path(os.path.realpath(path.parent)), ws)
    if planted and ws is not None and not _inside(final, ws):
        raise _refuse(
            text,
            f"{path} is a symlink inside the workspace that leads outside it ({final})",
            hint="remove the link or name the real file",
        )
    return OutputTarget(TargetKind.FILE, final, text)


def _ready_parent(path: Path, text: str, ws: Path | None) -> Path:
    """`path` itself, once its folder exists (created only inside the workspace)."""
    parent = path.parent
    if parent.is_dir():
        return path
    if parent.exists():
        raise _refuse(text, f"{parent} is not a folder")
    probe = parent
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if ws is None or not _inside(Path(os.path.realpath(probe)), ws):
        raise _refuse(
            text,
            f"the folder {parent} does not exist",
            hint="create it first (vtcode creates missing folders only inside the workspace)",
        )
    try:
        fsutil.ensure_private_dir(parent)
    except OSError as e:
        raise _refuse(text, f"cannot create {parent}: {e.strerror or e}") from None
    return path


def ready_folder(path: Path, *, spec: str, workspace: Path | None) -> Path:
    """A folder the user named as an output (`--events DIR`): created when its parent exists
    (naming it is asking for it) or inside the workspace; missing parents elsewhere refused."""
    if path.is_dir() and not path.is_symlink():
        return path
    ws = Path(os.path.realpath(workspace)) if workspace is not None else None
    if not path.parent.is_dir():
        _ready_parent(path, spec, ws)
    try:
        fsutil.ensure_private_dir(path)
    except OSError as e:
        raise _refuse(spec, f"cannot create the folder {path}: {e.strerror or e}") from None
    return path


def write_output(target: OutputTarget, data: bytes, stdout: IO[bytes]) -> None:
    """Write `data` whole to a checked target; an I/O failure is a `UsageError` naming it."""
    try:
        if target.kind is TargetKind.STDOUT:
            stdout.write(data)
            stdout.flush()
        elif target.kind is TargetKind.THROUGH:
            fd = open_through(target)
            try:
                fsutil.write_all(fd, data)
            finally:
                os.close(fd)
        else:
            assert target.path is not None
            fsutil.atomic_write_bytes(target.path, data)
    except OSError as e:
        raise UsageError(
            f"cannot write {target.describe()}: {e.strerror or e}", location=target.spec
        ) from None


def open_through(target: OutputTarget) -> int:
    """An fd writing to an existing device, FIFO or redirected file; never creates anything."""
    assert target.path is not None
    flags = os.O_WRONLY | _O_CLOEXEC | _O_NOCTTY | (os.O_APPEND if target.append else 0)
    return os.open(target.path, flags)


def open_stream(target: OutputTarget) -> int:
    """An fd for an output written piece by piece (`--events`): created 0600 and truncated.

    A FILE target is opened without following a symlink at the last component (it was resolved
    when checked; a link swapped in since then makes this fail instead of being followed).
    """
    if target.kind is TargetKind.THROUGH:
        return open_through(target)
    if target.kind is TargetKind.STDOUT:
        return os.dup(1)
    assert target.path is not None
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _O_CLOEXEC | _O_NOFOLLOW
    fd = os.open(target.path, flags, fsutil.FILE_MODE)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # pragma: no cover - raced to a non-file
        os.close(fd)
        raise UsageError("cannot write here: not a regular file", location=target.spec)
    return fd
