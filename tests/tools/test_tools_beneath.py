"""File tools without check-then-use: swap races, escapes and non-regular files.

Every test runs twice: with the kernel's openat2 (RESOLVE_BENEATH) and with it switched off, so
the O_NOFOLLOW dir-fd walk that older kernels get is tested on this machine too. Tools that could
block (a FIFO) run in a thread joined with a timeout, so a regression fails instead of hanging.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import resource
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from vtcode.tools import openat2
from vtcode.tools.base import ToolContext, ToolError, ToolResult
from vtcode.tools.beneath import Beneath
from vtcode.tools.paths import resolve_path
from vtcode.tools.registry import ToolRegistry

_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}.get(platform.machine())
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _exchange(a: bytes, b: bytes) -> int:
    """renameat2(a, b, RENAME_EXCHANGE): both names swap atomically (0, or the errno)."""
    assert _RENAMEAT2 is not None
    rc = _libc.syscall(
        ctypes.c_long(_RENAMEAT2),
        ctypes.c_int(_AT_FDCWD),
        ctypes.c_char_p(a),
        ctypes.c_int(_AT_FDCWD),
        ctypes.c_char_p(b),
        ctypes.c_uint(_RENAME_EXCHANGE),
    )
    return 0 if rc == 0 else ctypes.get_errno()


@pytest.fixture(params=["openat2", "walk"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which resolver the tools use: the kernel's openat2, or the fallback walk."""
    if request.param == "walk":
        monkeypatch.setattr(openat2.state, "available", False)
    else:
        fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
        try:
            probe = openat2.openat2_beneath(fd, ".", os.O_RDONLY | os.O_DIRECTORY)
        finally:
            os.close(fd)
        if probe is None:
            pytest.skip("this kernel has no openat2")
        os.close(probe)
    return str(request.param)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "f.txt").write_text("OUTSIDE\n")
    return out


def _bounded(fn: Callable[[], ToolResult], timeout: float = 10.0) -> ToolResult | ToolError:
    """Run a tool call in a thread; fail (not hang) if it does not return within `timeout`."""
    box: list[ToolResult | BaseException] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:
            box.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), f"the tool call blocked for more than {timeout} s"
    got = box[0]
    if isinstance(got, ToolError):
        return got
    if isinstance(got, BaseException):
        raise got
    return got


# -- the swap race -------------------------------------------------------------------------


@pytest.fixture
def swapper(tool_ctx: ToolContext, outside: Path) -> Iterator[list[int]]:
    """`d` (a folder) and `s` (a symlink to the outside folder) swapped in a tight loop."""
    if _RENAMEAT2 is None:
        pytest.skip("renameat2 syscall number unknown on this architecture")
    ws = tool_ctx.workspace
    (ws / "d").mkdir()
    (ws / "d/f.txt").write_text("inside\n")
    (ws / "s").symlink_to(outside)
    a, b = os.fsencode(ws / "d"), os.fsencode(ws / "s")
    assert _exchange(a, b) == 0 and (ws / "d").is_symlink()  # the kernel can do it here
    assert _exchange(a, b) == 0 and not (ws / "d").is_symlink()
    stop = threading.Event()
    swaps = [0]

    def loop() -> None:
        while not stop.is_set():
            if _exchange(a, b) == 0:
                swaps[0] += 1

    worker = threading.Thread(target=loop, daemon=True)
    worker.start()
    try:
        yield swaps
    finally:
        stop.set()
        worker.join(10)


def test_the_swap_race_defeats_a_string_check_then_open(
    swapper: list[int], tool_ctx: ToolContext
) -> None:
    """Control: the old design (check the path string by realpath, then open it) does read the
    outside file under this race on this machine, so the zero below means something."""
    seen = attempts = 0
    while not seen and attempts < 20_000:
        attempts += 1
        try:
            checked = resolve_path(tool_ctx.workspace, "d/f.txt")  # refuses while d is the link
            seen += checked.read_text() == "OUTSIDE\n"  # ... but d may be the link by now
        except (ToolError, OSError):
            continue
    assert seen, f"no check-then-use read went outside in {attempts} tries"


def test_swap_race_lands_nothing_outside(
    backend: str,
    swapper: list[int],
    tool_registry: ToolRegistry,
    tool_ctx: ToolContext,
    outside: Path,
) -> None:
    outcomes = {"inside": 0, "outside": 0, "refused": 0}
    for i in range(1000):
        try:
            out = tool_registry.run("read_file", {"path": "d/f.txt"}, tool_ctx).output
        except ToolError:
            outcomes["refused"] += 1
        else:
            outcomes["outside" if "OUTSIDE" in out else "inside"] += 1
        try:
            tool_registry.run("write_file", {"path": f"d/w{i}.txt", "content": "x"}, tool_ctx)
        except ToolError:
            outcomes["refused"] += 1
    assert swapper[0] > 100, "the folder and the symlink were hardly swapped"
    assert outcomes["outside"] == 0, outcomes
    assert outcomes["inside"] > 0, outcomes
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == "OUTSIDE\n"


def test_swap_race_lands_no_patch_listing_or_match_outside(
    backend: str,
    swapper: list[int],
    tool_registry: ToolRegistry,
    tool_ctx: ToolContext,
    outside: Path,
) -> None:
    (outside / "secret.txt").write_text("OUTSIDE\n")
    for i in range(200):
        patch = f"*** Begin Patch\n*** Add File: d/p{i}.txt\n+x\n*** End Patch"
        for name, args in (
            ("apply_patch", {"input": patch}),
            ("list_files", {"path": "d"}),
            ("grep", {"pattern": "OUTSIDE", "path": "d"}),
        ):
            try:
                out = tool_registry.run(name, args, tool_ctx).output
            except ToolError:
                continue
            assert "OUTSIDE" not in out and "secret.txt" not in out, (name, out)
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt", "secret.txt"]


# -- escapes -------------------------------------------------------------------------------


@pytest.fixture
def links(tool_ctx: ToolContext, outside: Path) -> Path:
    ws = tool_ctx.workspace
    (ws / "src").mkdir()
    (ws / "src/app.py").write_text("inside\n")
    (ws / "abs-out").symlink_to(outside)  # absolute, outside
    (ws / "rel-out").symlink_to(Path("..") / "outside")  # relative, outside
    (ws / "chain1").symlink_to("chain2")  # chain ending outside
    (ws / "chain2").symlink_to("src/../chain3")
    (ws / "chain3").symlink_to(outside / "f.txt")
    (ws / "magic").symlink_to("/proc/self/root")
    (ws / "cwd").symlink_to("/proc/self/cwd")
    (ws / "loop").symlink_to("loop")
    (ws / "in-abs").symlink_to(ws / "src")  # inside, absolute: followed
    (ws / "in-rel").symlink_to("src/app.py")  # inside, relative: followed
    return ws


BEGIN = "*** Begin Patch\n"
ESCAPES = [
    ("../outside/f.txt", "outside the workspace"),
    ("src/../../outside/f.txt", "outside the workspace"),
    ("/etc/passwd", "outside the workspace"),
    ("abs-out/f.txt", "through a symlink"),
    ("rel-out/f.txt", "through a symlink"),
    ("chain1", "through a symlink"),
    ("magic/etc/passwd", "through a symlink"),
    ("cwd/README.md", "through a symlink"),
    ("loop", "too many levels of symbolic links"),
]


@pytest.mark.parametrize(("raw", "message"), ESCAPES)
def test_escapes_are_refused_by_every_file_tool(
    backend: str,
    links: Path,
    tool_registry: ToolRegistry,
    tool_ctx: ToolContext,
    outside: Path,
    raw: str,
    message: str,
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": raw}),
        ("write_file", {"path": raw, "content": "pwned"}),
        ("write_file", {"path": raw + "/new.txt", "content": "pwned"}),
        ("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {raw}/n\n+x\n*** End Patch"}),
        ("apply_patch", {"input": f"*** Begin Patch\n*** Delete File: {raw}/f\n*** End Patch"}),
    ]
    if raw != "chain1":  # a file, not a folder: list/grep of the target itself
        calls += [("list_files", {"path": raw}), ("grep", {"pattern": "x", "path": raw})]
    for name, args in calls:
        with pytest.raises(ToolError, match=message):
            tool_registry.run(name, args, tool_ctx)
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == "OUTSIDE\n"


def test_symlinks_inside_the_workspace_are_followed(
    backend: str, links: Path, tool_registry: ToolRegistry, tool_ctx: ToolContext
) -> None:
    for raw in ("in-abs/app.py", "in-rel", str(links / "src/app.py"), "src/../in-rel"):
        res = tool_registry.run("read_file", {"path": raw}, tool_ctx)
        assert (res.output, res.data and res.data["path"]) == ("inside", "src/app.py"), raw
    res = tool_registry.run("write_file", {"path": "in-abs/new.py", "content": "n\n"}, tool_ctx)
    assert res.data is not None and res.data["path"] == "src/new.py"
    assert (links / "src/new.py").read_text() == "n\n"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("rel-vt/x", r"inside \.vtcode/"),
        ("rel-git/hooks/pre-commit", r"inside a \.git/ folder"),
        ("src/up/.vtcode/y", r"inside \.vtcode/"),
        ("rel-git-file", r"inside a \.git/ folder"),
    ],
)
def test_writes_through_links_to_protected_folders_are_refused(
    backend: str,
    links: Path,
    tool_registry: ToolRegistry,
    tool_ctx: ToolContext,
    raw: str,
    message: str,
) -> None:
    """The protected names are checked on the physical path, whichever resolver ran."""
    (links / ".vtcode").mkdir()
    (links / ".git/hooks").mkdir(parents=True)
    (links / ".git/config").write_text("[core]\n")
    (links / "rel-vt").symlink_to(".vtcode")
    (links / "rel-git").symlink_to(".git")
    (links / "rel-git-file").symlink_to(".git/config")
    (links / "src/up").symlink_to("..")
    # a link to a file has content to update; a path through a folder link gets a new file
    op = (
        f"*** Update File: {raw}\n-[core]\n+[x]\n"
        if raw == "rel-git-file"
        else f"*** Add File: {raw}.new\n+x\n"
    )
    calls = [
        ("write_file", {"path": raw, "content": "pwned"}),
        ("apply_patch", {"input": BEGIN + op + "*** End Patch"}),
    ]
    for name, args in calls:
        with pytest.raises(ToolError, match=message):
            tool_registry.run(name, args, tool_ctx)
    assert sorted(p.name for p in (links / ".vtcode").iterdir()) == []
    assert sorted(p.name for p in (links / ".git").iterdir()) == ["config", "hooks"]
    assert (links / ".git/config").read_text() == "[core]\n"


def test_walks_never_leave_the_workspace(
    backend: str, links: Path, tool_registry: ToolRegistry, tool_ctx: ToolContext
) -> None:
    listing = tool_registry.run("list_files", {"recursive": True}, tool_ctx).output
    assert "f.txt" not in listing and "passwd" not in listing
    assert "abs-out\n" in listing + "\n" and "src/app.py" in listing
    assert tool_registry.run("grep", {"pattern": "OUTSIDE|root:"}, tool_ctx).output == (
        "[no matches]"
    )


def test_openat2_refuses_escapes_and_magic_links(outside: Path) -> None:
    """The primitive itself: the kernel's answers, not ours."""
    flags = os.O_RDONLY
    proc = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY)
    base = os.open(outside, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for fd, path, err in (
            (base, "../outside/f.txt", errno.EXDEV),
            (base, "/etc/passwd", errno.EXDEV),
            (proc, "root/etc/passwd", errno.ELOOP),
            (proc, "fd/0", errno.ELOOP),
        ):
            with pytest.raises(OSError) as info:
                openat2.openat2_beneath(fd, path, flags)
            assert info.value.errno == err, path
        inner = openat2.openat2_beneath(base, "f.txt", flags)
        if inner is None:
            pytest.skip("this kernel has no openat2")
        assert os.read(inner, 100) == b"OUTSIDE\n"
        os.close(inner)
    finally:
        os.close(proc)
        os.close(base)


def test_magic_links_are_refused_by_the_walk_too(backend: str) -> None:
    with Beneath(Path("/proc/self")) as ws:
        for raw in ("root/etc/passwd", "fd/0", "cwd"):
            with pytest.raises(ToolError, match="through a symlink"):
                ws.open(raw)


# -- non-regular files ---------------------------------------------------------------------


@pytest.fixture
def specials(tool_ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A FIFO, a socket and (as root) a character device in the workspace; plus a text file."""
    ws = tool_ctx.workspace
    (ws / "sub").mkdir()
    (ws / "sub/ok.txt").write_text("needle\n")
    os.mkfifo(ws / "pipe")
    os.mkfifo(ws / "sub/pipe")
    monkeypatch.chdir(ws)  # a relative bind: AF_UNIX paths are limited to 108 bytes
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind("sock")
    with contextlib.suppress(PermissionError):
        os.mknod(ws / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    try:
        yield ws
    finally:
        sock.close()
        for fifo in (ws / "pipe", ws / "sub/pipe"):  # wake a reader a regression left blocked
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.parametrize(
    ("name", "kind"), [("pipe", "fifo"), ("sock", "socket"), ("null", "character device")]
)
def test_non_regular_files_are_refused_without_blocking(
    backend: str,
    specials: Path,
    tool_registry: ToolRegistry,
    tool_ctx: ToolContext,
    name: str,
    kind: str,
) -> None:
    if not (specials / name).exists() and not (specials / name).is_socket():
        pytest.skip(f"cannot create a {kind} here")
    before = os.lstat(specials / name)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": name}),
        ("grep", {"pattern": "x", "path": name}),
        ("write_file", {"path": name, "content": "x"}),
        (
            "apply_patch",
            {"input": f"*** Begin Patch\n*** Update File: {name}\n-a\n+b\n*** End Patch"},
        ),
        ("apply_patch", {"input": f"*** Begin Patch\n*** Delete File: {name}\n*** End Patch"}),
    ]
    for tool, args in calls:
        got = _bounded(partial(tool_registry.run, tool, args, tool_ctx))
        assert isinstance(got, ToolError), (tool, got)
        assert f"not a regular file: {name} ({kind})" in str(got), (tool, str(got))
    after = os.lstat(specials / name)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)  # never replaced


def test_walks_skip_fifos_and_list_marks_them(
    backend: str, specials: Path, tool_registry: ToolRegistry, tool_ctx: ToolContext
) -> None:
    got = _bounded(lambda: tool_registry.run("grep", {"pattern": "needle"}, tool_ctx))
    assert isinstance(got, ToolResult) and got.output == "sub/ok.txt:1:needle"
    assert got.data is not None and got.data["files_searched"] == 1
    got = _bounded(lambda: tool_registry.run("list_files", {"recursive": True}, tool_ctx))
    assert isinstance(got, ToolResult)
    expected = ["pipe [fifo]", "sock [socket]", "sub/", "sub/ok.txt", "sub/pipe [fifo]"]
    if (specials / "null").exists():
        expected.insert(0, "null [character device]")
    assert got.output.splitlines() == expected


# -- environment failures ------------------------------------------------------------------


def test_running_out_of_file_descriptors_is_a_tool_error(
    backend: str, tool_registry: ToolRegistry, tool_ctx: ToolContext
) -> None:
    """EMFILE mid-walk (a real fd table filled up to RLIMIT_NOFILE) fails the call with a
    message for the model; it never escapes as an OSError that would end the run."""
    ws = tool_ctx.workspace
    (ws / "a/b").mkdir(parents=True)
    (ws / "a/b/f.txt").write_text("x\n")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "a/b/f.txt"}),
        ("write_file", {"path": "a/b/g.txt", "content": "x"}),
        ("list_files", {"path": "a/b"}),
        ("grep", {"pattern": "x", "path": "a"}),
        ("apply_patch", {"input": f"{BEGIN}*** Add File: a/b/h.txt\n+x\n*** End Patch"}),
    ]
    for name, args in calls:  # warm up: lazy imports need fds too
        tool_registry.run(name, args, tool_ctx)
    (ws / "a/b/h.txt").unlink()
    (ws / "a/b/g.txt").unlink()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 4096), hard))
    held: list[int] = []
    try:
        with contextlib.suppress(OSError):
            while True:
                held.append(os.dup(0))
        os.close(held.pop())  # exactly one fd left: the workspace folder takes it
        for name, args in calls:
            with pytest.raises(ToolError, match=r"cannot|Too many open files"):
                tool_registry.run(name, args, tool_ctx)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert not (ws / "a/b/g.txt").exists() and not (ws / "a/b/h.txt").exists()
