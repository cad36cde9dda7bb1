"""Paths inside the workspace, opened without check-then-use.

A path that was checked as a string and then opened can be swapped in between (a folder
exchanged for a symlink to `/etc`), so the file tools never open a path string. `Beneath` holds
an fd on the workspace folder; every lookup starts there and every later access is relative to
an fd this module opened (`openat`, `mkdirat`, `renameat`, `unlinkat`, `fdopendir`):

- Fast path: `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` opens the parent folder in one
  kernel lookup that cannot leave the workspace (see `vtcode.tools.openat2`).
- Otherwise (no openat2, or it refused): a walk one component at a time, each folder opened with
  `O_NOFOLLOW | O_DIRECTORY` relative to the previous fd. A symlink met on the way is read with
  `readlinkat` and its target walked the same way, so symlinks inside the workspace are followed
  (also absolute ones naming the workspace, which RESOLVE_BENEATH alone refuses), while `..`
  past the top, an absolute target elsewhere, and magic links (`/proc/self/root` reads as `/`)
  are refused. The kernel never follows a link for us, so a swap can only make a call fail.

What this does not stop: a folder that is moved out of the workspace after it was opened is
still written through the fd (the mover already had write access outside); hard links to
outside files are ordinary files.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import posixpath
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from vtcode.config.policy_paths import policy_inodes
from vtcode.tools.base import ToolError
from vtcode.tools.openat2 import openat2_beneath
from vtcode.tools.paths import refuse_protected

_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in after the lstat still opens at once (and is then refused)
_O_FILE = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
_MAX_LINKS = 40  # as the kernel's MAXSYMLINKS
_RETRIES = 32  # a path that keeps changing under us gives up with a clear error
_KINDS = (
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


NEW_FILE_MODE = 0o666 & ~_umask()


@contextlib.contextmanager
def os_errors(target: str) -> Iterator[None]:
    """An OSError the environment raises mid-call (EIO, EMFILE, EACCES, ENOSPC) becomes a tool
    failure the model is told about, never a crash of the run."""
    try:
        yield
    except OSError as exc:
        raise ToolError(f"cannot access {target}: {exc.strerror or exc}") from exc


def kind_of(mode: int) -> str:
    """`fifo`, `socket`, `character device`, `block device` (or `other`) for a non-regular file."""
    return next((name for test, name in _KINDS if test(mode)), "other")


def not_regular(rel: str, mode: int) -> ToolError:
    return ToolError(f"not a regular file: {rel} ({kind_of(mode)})")


class EntryChanged(Exception):
    """The entry changed between our lstat and our open; locate it again."""


@dataclass(slots=True)
class Located:
    """An entry beneath the workspace: an open folder fd and a name in it (`name` None: the
    folder itself). `pending` are folders still to create between the two (writes only);
    `rel` is the physical workspace-relative path, for messages and events only."""

    dir_fd: int
    name: str | None
    rel: str
    pending: list[str] = field(default_factory=list)

    def __enter__(self) -> Located:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1

    def detach(self) -> int:
        fd, self.dir_fd = self.dir_fd, -1
        return fd

    def lstat(self) -> os.stat_result | None:
        if self.pending:
            return None  # its folder does not exist yet
        if self.name is None:
            return os.fstat(self.dir_fd)
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def make_parents(self) -> None:
        """Create the missing folders (mkdirat), each opened O_NOFOLLOW before the next."""
        while self.pending:
            name = self.pending[0]
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=self.dir_fd)
            fd = os.open(name, _O_DIR, dir_fd=self.dir_fd)
            os.close(self.dir_fd)
            self.dir_fd = fd
            self.pending.pop(0)


@dataclass(frozen=True, slots=True)
class Opened:
    """An open regular file (`O_RDONLY`, blocking) or folder, with its physical relative path."""

    fd: int
    rel: str
    is_dir: bool


@functools.lru_cache(maxsize=64)
def _realpath(path: str) -> str:
    """The workspace's canonical spelling, once per process (a realpath costs ~20 us per call;
    it only maps absolute paths and symlink targets, the fd opened from it is the anchor)."""
    return os.path.realpath(path)


def open_workspace(workspace: Path) -> Beneath:
    """`Beneath(workspace)`, or a ToolError when the workspace folder itself cannot be opened."""
    try:
        return Beneath(workspace)
    except OSError as exc:
        raise ToolError(f"cannot open the workspace {str(workspace)!r}: {exc.strerror}") from exc


class Beneath:
    """The workspace as a folder fd; every path a file tool uses is resolved from it."""

    def __init__(self, workspace: Path) -> None:
        self.given = str(Path(workspace).absolute())
        self.real = _realpath(self.given)
        self.fd = os.open(self.real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def __enter__(self) -> Beneath:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        os.close(self.fd)

    # -- lookup --------------------------------------------------------------------------

    def locate(
        self,
        raw: str,
        *,
        write: bool = False,
        follow_last: bool = True,
        create: bool = False,
        what: str = "path",
    ) -> Located:
        """Resolve `raw` to (folder fd, name) beneath the workspace, or raise ToolError saying
        why it is refused. `write` also refuses `.vtcode/` at the top and `.git/` anywhere (by
        the name given and by the physical path); `create` leaves missing folders in
        `pending` (nothing is created until `make_parents`)."""
        comps = self._components(raw, what)
        if write:
            lexical = posixpath.normpath("/".join(comps) or ".")
            refuse_protected(tuple(p for p in lexical.split("/") if p != "."), raw, what)
        loc = None
        if comps and comps[-1] != "..":
            loc = self._fast(comps, follow_last=follow_last)
        if loc is None:
            loc = _Walk(self, raw, what, write=write, create=create).run(comps, follow_last)
        if write:
            try:
                parts = tuple(p for p in loc.rel.split("/") if p != ".")
                refuse_protected(parts, raw, what)
                self._refuse_alias(loc, raw, what)
            except ToolError:
                loc.close()
                raise
        return loc

    def _refuse_alias(self, loc: Located, raw: str, what: str) -> None:
        """A hard link is the policy file under another name: refused by its inode."""
        st = loc.lstat()
        if st is None or not stat.S_ISREG(st.st_mode) or st.st_nlink < 2:
            return
        if (st.st_dev, st.st_ino) in policy_inodes(Path(self.real)):
            raise ToolError(
                f"{what} {raw!r} is a hard link to a policy file (the workspace config or "
                ".git/config), which tools may not modify"
            )

    def open(self, raw: str, *, what: str = "path") -> Opened:
        """A regular file or a folder, opened; anything else is a ToolError naming its kind."""
        for _ in range(_RETRIES):
            with self.locate(raw, what=what) as loc:
                if loc.name is None:
                    return Opened(loc.detach(), loc.rel, True)
                try:
                    fd, is_dir = open_entry(loc.dir_fd, loc.name, raw, loc.rel)
                except EntryChanged:
                    continue
                return Opened(fd, loc.rel, is_dir)
        raise ToolError(f"{what} {raw!r} kept changing while it was opened; try again")

    def _components(self, raw: str, what: str) -> list[str]:
        if not isinstance(raw, str) or raw == "":
            raise ToolError(f"{what} must be a non-empty string")
        if "\x00" in raw:
            raise ToolError(f"{what} {raw!r} contains a NUL byte")
        text = str(Path(raw).expanduser()) if raw.startswith("~") else raw
        if text.startswith("/"):
            inner = self.strip_root(text)
            if inner is None:
                raise ToolError(f"{what} {raw!r} is outside the workspace ({self.real})")
            text = inner
        return [c for c in text.split("/") if c not in ("", ".")]

    def strip_root(self, absolute: str) -> str | None:
        """`absolute` relative to the workspace (either spelling of it), or None if outside."""
        for prefix in (self.real, self.given):
            if absolute == prefix or absolute.startswith(prefix.rstrip("/") + "/"):
                return absolute[len(prefix) :].lstrip("/")
        return None

    def _fast(self, comps: list[str], *, follow_last: bool) -> Located | None:
        """openat2 on the parent folder; None sends the caller to the walk (no openat2, a
        refusal to explain, a folder to create, or a final symlink to follow)."""
        try:
            fd = openat2_beneath(self.fd, "/".join(comps[:-1]) or ".", _O_DIR & ~os.O_NOFOLLOW)
        except OSError:
            return None
        if fd is None:
            return None
        name = comps[-1]
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            linked = stat.S_ISLNK(st.st_mode)
        except FileNotFoundError:
            linked = False
        except OSError:
            linked = True  # let the walk say what is wrong
        where = None if linked and follow_last else self._where(fd)
        if where is None:
            os.close(fd)
            return None
        return Located(fd, name, f"{where}/{name}" if where else name)

    def _where(self, fd: int) -> str | None:
        """The physical relative path of an open folder (the kernel's name for it)."""
        try:
            # os.readlink, not Path.readlink: this runs on every call and pathlib costs 15 us
            return self.strip_root(os.readlink(f"/proc/self/fd/{fd}"))  # noqa: PTH115
        except OSError:
            return None


class _Walk:
    """One component at a time from the workspace fd (see the module docstring)."""

    def __init__(self, ws: Beneath, raw: str, what: str, *, write: bool, create: bool) -> None:
        self.ws, self.raw, self.what, self.write, self.create = ws, raw, what, write, create
        self.fds = [os.dup(ws.fd)]
        self.names: list[str] = []
        self.links = 0
        self.spins = 0

    def run(self, comps: list[str], follow_last: bool) -> Located:
        todo = list(reversed(comps))
        try:
            while todo:
                comp = todo.pop()
                if comp in ("", "."):
                    continue
                if comp == "..":
                    self._up()
                    continue
                if not todo:  # the last component: not opened here, only looked at
                    st = self._lstat(comp)
                    if st is not None and stat.S_ISLNK(st.st_mode) and follow_last:
                        self._follow(comp, todo)
                        continue
                    return Located(self.fds.pop(), comp, "/".join([*self.names, comp]))
                deferred = self._descend(comp, todo)
                if deferred is not None:
                    return deferred
            return Located(self.fds.pop(), None, "/".join(self.names) or ".")
        finally:
            for fd in self.fds:
                os.close(fd)

    def _up(self) -> None:
        if not self.names:
            if self.links:
                raise ToolError(
                    f"{self.what} {self.raw!r} resolves through a symlink to a place "
                    "outside the workspace"
                )
            raise ToolError(f"{self.what} {self.raw!r} is outside the workspace ({self.ws.real})")
        os.close(self.fds.pop())
        self.names.pop()

    def _descend(self, comp: str, todo: list[str]) -> Located | None:
        """Step into folder `comp`; a Located when the rest is missing and may be created."""
        try:
            fd = os.open(comp, _O_DIR, dir_fd=self.fds[-1])
        except FileNotFoundError:
            if not self.create:
                raise ToolError(f"{self.raw!r} does not exist") from None
            return self._defer(comp, todo)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise ToolError(f"cannot open {self.raw!r}: {exc.strerror}") from exc
            st = self._lstat(comp)
            if st is not None and stat.S_ISLNK(st.st_mode):
                self._follow(comp, todo)
            elif st is None or stat.S_ISDIR(st.st_mode):
                self._spin()
                todo.append(comp)  # it changed under us: look again
            else:
                here = "/".join([*self.names, comp])
                raise ToolError(f"{self.what} {self.raw!r}: {here!r} is not a folder") from None
            return None
        self.fds.append(fd)
        self.names.append(comp)
        if self.write:
            refuse_protected(tuple(self.names), self.raw, self.what)
        return None

    def _defer(self, comp: str, todo: list[str]) -> Located:
        """The rest of the path does not exist: the folders to create, then the name."""
        rest = [c for c in reversed(todo) if c not in ("", ".")]
        if ".." in rest or not rest:
            raise ToolError(f"{self.raw!r} does not exist")
        name = rest.pop()
        rel = "/".join([*self.names, comp, *rest, name])
        return Located(self.fds.pop(), name, rel, [comp, *rest])

    def _follow(self, comp: str, todo: list[str]) -> None:
        try:
            target = os.readlink(comp, dir_fd=self.fds[-1])
        except OSError:
            self._spin()
            todo.append(comp)
            return
        self.links += 1
        if self.links > _MAX_LINKS:
            raise ToolError(f"{self.what} {self.raw!r} has too many levels of symbolic links")
        if target.startswith("/"):
            inner = self.ws.strip_root(target)
            if inner is None:
                raise ToolError(
                    f"{self.what} {self.raw!r} resolves through a symlink to {target}, "
                    "outside the workspace"
                )
            while len(self.fds) > 1:
                os.close(self.fds.pop())
            self.names.clear()
            target = inner
        todo.extend(reversed([c for c in target.split("/") if c not in ("", ".")]))

    def _lstat(self, comp: str) -> os.stat_result | None:
        try:
            return os.stat(comp, dir_fd=self.fds[-1], follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ToolError(f"cannot open {self.raw!r}: {exc.strerror}") from exc

    def _spin(self) -> None:
        self.spins += 1
        if self.spins > _RETRIES:
            raise ToolError(f"{self.what} {self.raw!r} kept changing while it was opened")


def open_entry(dir_fd: int, name: str, raw: str, rel: str) -> tuple[int, bool]:
    """Open `name` in `dir_fd` if it is a regular file or a folder: (fd, is_dir).

    Never blocks: anything else is refused from its lstat before any open, and the open itself
    is O_NONBLOCK|O_NOFOLLOW and checked again with fstat (a FIFO swapped in between opens at
    once and is refused). `EntryChanged` when the entry changed between the two.
    """
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise ToolError(f"{raw!r} does not exist") from None
    if stat.S_ISLNK(st.st_mode):
        raise EntryChanged
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        raise not_regular(rel, st.st_mode)
    flags = _O_DIR if stat.S_ISDIR(st.st_mode) else _O_FILE
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            raise EntryChanged from None
        raise ToolError(f"cannot open {raw!r}: {exc.strerror}") from exc
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode):
        os.set_blocking(fd, True)
        return fd, False
    if stat.S_ISDIR(st.st_mode):
        return fd, True
    os.close(fd)
    raise not_regular(rel, st.st_mode)


def open_regular_in(dir_fd: int, name: str) -> int | None:
    """A read fd on regular file `name` in `dir_fd`, or None for anything else (walks skip
    FIFOs, sockets, devices and symlinks without opening them in a blocking way)."""
    try:
        fd = os.open(name, _O_FILE, dir_fd=dir_fd)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    os.set_blocking(fd, True)
    return fd


def open_subdir(dir_fd: int, name: str) -> int | None:
    """A folder fd on `name` in `dir_fd` (never through a symlink), or None."""
    try:
        return os.open(name, _O_DIR, dir_fd=dir_fd)
    except OSError:
        return None
