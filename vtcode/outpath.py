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
- vtcode's own files are never a target, by any name (issues 23 and 30): a target whose real
  path lies in a `.vtcode/` folder or in VTCODE_HOME, or whose folder is one of those by device
  and inode (a bind mount), is refused; so is a regular file with more than one hard link
  (resolving a path cannot tell that another name of the same file is a session's
  events.jsonl). The check is repeated on the fd that is written (`fstat`, the kernel's name
  of the fd), so a name swapped between the check and the open is caught, and a FIFO with no
  reader is refused at once (`O_NONBLOCK`) instead of blocking forever.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from pathlib import Path
from typing import IO

from vtcode import fsutil
from vtcode.errors import UsageError
from vtcode.ownfile import kind_of

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
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
    option: str | None = None  # the option that named it (`--events`), for messages

    def describe(self) -> str:
        return "stdout" if self.path is None else str(self.path)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _refuse(spec: str, why: str, hint: str | None = None, option: str | None = None) -> UsageError:
    lead = f"{option}: " if option else ""
    return UsageError(f"{lead}cannot write here: {why}", location=spec, hint=hint)


def _own_roots() -> list[Path]:
    """vtcode's folders outside workspaces, resolved: VTCODE_HOME, and the default config and
    state folders it replaces (`$XDG_CONFIG_HOME/vtcode`, `~/.config/vtcode`, the same under
    `$XDG_STATE_HOME` / `~/.local/state`). The `.vtcode/` folders are recognised by name."""
    env = os.environ
    found: list[Path] = [Path(env["VTCODE_HOME"])] if env.get("VTCODE_HOME") else []
    for var, default in (("XDG_CONFIG_HOME", ".config"), ("XDG_STATE_HOME", ".local/state")):
        base = Path(env.get(var) or ".")
        if not base.is_absolute():  # the XDG spec ignores relative values
            try:
                base = Path("~").expanduser() / default
            except RuntimeError:  # no HOME and no passwd entry
                continue
        found.append(base / "vtcode")
    return [Path(os.path.realpath(f)) for f in found if f.is_absolute()]


def own_file_reason(real: Path, workspace: Path | None = None) -> str | None:
    """Why the real path `real` belongs to vtcode's own files (None: it does not)."""
    if fsutil.STATE_DIR_NAME in real.parts:
        return f"{real} is inside a {fsutil.STATE_DIR_NAME}/ folder, vtcode's own store"
    for root in _own_roots():
        if _inside(real, root):
            return f"{real} is inside {root}, vtcode's own files (VTCODE_HOME or its default)"
    ids = _own_folder_ids(workspace)
    folder = real
    while ids:
        try:
            st = folder.stat()
        except OSError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) in ids:
            return f"{real} is inside vtcode's own files (the same folder by device and inode)"
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def _own_folder_ids(workspace: Path | None) -> set[tuple[int, int]]:
    """(st_dev, st_ino) of the workspace's `.vtcode/` and of VTCODE_HOME, where they exist."""
    folders = list(_own_roots())
    if workspace is not None:
        folders.append(Path(workspace) / fsutil.STATE_DIR_NAME)
    out: set[tuple[int, int]] = set()
    for f in folders:
        try:
            st = f.stat()
        except OSError:
            continue
        out.add((st.st_dev, st.st_ino))
    return out


def _aliases(st: os.stat_result) -> str | None:
    """Why a regular file may be another name of a file vtcode keeps (None: it is not)."""
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        return (
            f"it has {st.st_nlink} hard links; vtcode does not write through a hard link "
            "(another name of it may be one of vtcode's own files)"
        )
    return None


def _kind_word(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def check_output(
    spec: str | Path,
    *,
    workspace: Path | None = None,
    base: Path | None = None,
    option: str | None = None,
) -> OutputTarget:
    """Check `spec` against the rules above; raises `UsageError` (exit 2) when refused.

    `base` resolves a relative path (default: the current directory); `workspace` is where
    missing folders may be created and where a symlink may not lead out of; `option` names
    the option in messages.
    """
    try:
        target = _check(str(spec), workspace, base)
    except UsageError as e:
        if option:
            e.message = f"{option}: {e.message}"
        raise
    if target.path is not None:
        real = Path(os.path.realpath(target.path))
        why = own_file_reason(real, workspace)
        if why is None and target.kind is TargetKind.FILE:
            try:
                why = _aliases(real.stat())
            except OSError:
                why = None
        if why is not None:
            raise _refuse(str(spec), why, option=option)
    return dataclass_replace(target, option=option)


def _check(text: str, workspace: Path | None, base: Path | None) -> OutputTarget:
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


def ready_folder(
    path: Path, *, spec: str, workspace: Path | None, option: str | None = None
) -> Path:
    """A folder the user named as an output (`--events DIR`): created when its parent exists
    (naming it is asking for it) or inside the workspace; missing parents elsewhere refused;
    never one of vtcode's own folders (or inside one), nor a symlink."""
    why = own_file_reason(Path(os.path.realpath(path)), workspace)
    if why is None and path.is_symlink():
        why = f"{path} is a symlink to a folder"
    if why is not None:
        raise _refuse(spec, why, option=option)
    if path.is_dir():
        return path
    ws = Path(os.path.realpath(workspace)) if workspace is not None else None
    if not path.parent.is_dir():
        _ready_parent(path, spec, ws)
    try:
        fsutil.ensure_private_dir(path)
    except OSError as e:
        raise _refuse(spec, f"cannot create the folder {path}: {e.strerror or e}") from None
    return path


def open_early(target: OutputTarget) -> int | None:
    """For an output written only after a run (`exec -o`): a device or FIFO target is opened
    now, so a FIFO that nobody reads is exit 2 before anything runs (it used to be refused
    only once the run had spent its tokens). Pass the fd to `write_output`, which closes it.
    A file target is not touched here (None): it is replaced atomically at the end."""
    return open_through(target) if target.kind is TargetKind.THROUGH else None


def write_output(
    target: OutputTarget,
    data: bytes,
    stdout: IO[bytes],
    *,
    fd: int | None = None,
    mode: int = fsutil.FILE_MODE,
) -> None:
    """Write `data` whole to a checked target (through `fd` from `open_early` when given, which
    is closed); an I/O failure is a `UsageError` naming it. A replaced file is created with
    `mode` (less the umask): 0600 unless the caller publishes it (an HTML page, 0644)."""
    try:
        if target.kind is TargetKind.STDOUT:
            stdout.write(data)
            stdout.flush()
        elif target.kind is TargetKind.THROUGH:
            fd = open_through(target) if fd is None else fd
            try:
                fsutil.write_all(fd, data)
            finally:
                os.close(fd)
        else:
            _replace(target, data, mode)
    except OSError as e:
        lead = f"{target.option}: " if target.option else ""
        raise UsageError(
            f"{lead}cannot write {target.describe()}: {e.strerror or e}", location=target.spec
        ) from None


def _fd_refusal(target: OutputTarget, fd: int, st: os.stat_result) -> UsageError | None:
    """The checks of `check_output`, again on the open fd (what is written is what was checked:
    the kernel's own name of the fd, its inode and its link count)."""
    try:
        real = Path(os.readlink(f"/proc/self/fd/{fd}"))  # noqa: PTH115 - a magic link
    except OSError:
        real = Path(os.path.realpath(target.path)) if target.path else Path("/")
    why = own_file_reason(real) or _aliases(st)
    return None if why is None else _refuse(target.spec, why, option=target.option)


def _checked_fd(target: OutputTarget, fd: int, *, regular: bool) -> int:
    """`fd` once it passed `_fd_refusal` and is of the expected kind; closed and refused
    otherwise. Blocking mode is restored (it was opened O_NONBLOCK)."""
    try:
        st = os.fstat(fd)
        ok = stat.S_ISREG(st.st_mode) if regular else _writable_through(st.st_mode, target)
        if not ok:
            raise _refuse(
                target.spec, f"{target.describe()} is {kind_of(st.st_mode)}", option=target.option
            )
        refusal = _fd_refusal(target, fd, st)
        if refusal is not None:
            raise refusal
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _writable_through(mode: int, target: OutputTarget) -> bool:
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or (target.append and stat.S_ISREG(mode))


def open_through(target: OutputTarget) -> int:
    """An fd writing to an existing device, FIFO or redirected file; never creates anything.

    Opened O_NONBLOCK: a FIFO nobody reads is refused at once (ENXIO) instead of blocking
    forever; the fd is then checked (`_checked_fd`) and set back to blocking writes.
    """
    assert target.path is not None
    flags = os.O_WRONLY | _O_CLOEXEC | _O_NOCTTY | _O_NONBLOCK
    flags |= os.O_APPEND if target.append else 0
    try:
        fd = os.open(target.path, flags)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise _refuse(
                target.spec,
                f"{target.path} is a FIFO that no process is reading",
                hint="start the reader first",
                option=target.option,
            ) from None
        raise
    return _checked_fd(target, fd, regular=False)


def open_stream(target: OutputTarget) -> int:
    """An fd for an output written piece by piece (`--events`): created 0600 and truncated.

    A FILE target is opened without following a symlink at the last component (it was resolved
    when checked; a link swapped in since then makes this fail instead of being followed),
    without O_TRUNC: it is truncated only once the fd passed the checks (a regular file, one
    link, not vtcode's own), so a hard link swapped in is refused with the file untouched.
    """
    if target.kind is TargetKind.THROUGH:
        return open_through(target)
    if target.kind is TargetKind.STDOUT:
        return os.dup(1)
    assert target.path is not None
    flags = os.O_WRONLY | os.O_CREAT | _O_CLOEXEC | _O_NOFOLLOW | _O_NONBLOCK | _O_NOCTTY
    fd = _checked_fd(target, os.open(target.path, flags, fsutil.FILE_MODE), regular=True)
    try:
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _replace(target: OutputTarget, data: bytes, mode: int = fsutil.FILE_MODE) -> None:
    """Replace a FILE target atomically (temp file, fsync, rename) inside its folder's fd.

    The folder is opened once and checked by the kernel's name for it; the temp file is made
    and renamed relative to that fd, so a folder swapped for a link into `.vtcode/` after the
    check is not followed. The entry replaced may not be a hard link (renaming over one would
    be harmless to the other name, but refusing keeps one rule for every output).
    """
    assert target.path is not None
    path = target.path
    dfd = os.open(path.parent, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        try:
            where = Path(os.readlink(f"/proc/self/fd/{dfd}"))  # noqa: PTH115 - a magic link
        except OSError:
            where = Path(os.path.realpath(path.parent))
        why = own_file_reason(where / path.name)
        try:
            st = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if why is None and st is not None:
            why = _aliases(st) if not stat.S_ISDIR(st.st_mode) else f"{path} is a directory"
        if why is not None:
            raise _refuse(target.spec, why, option=target.option)
        tmp = f".{path.name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_NOFOLLOW
        fd = os.open(tmp, flags, mode, dir_fd=dfd)
        try:
            try:
                fsutil.write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        os.fsync(dfd)
    finally:
        os.close(dfd)
