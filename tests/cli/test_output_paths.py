"""Output options write only where the user meant (issue 17, deliverable 7).

`-` and character devices/FIFOs are written through, a symlink is followed only to a regular file
(never out of the workspace when the link lies inside it), anything else is refused with exit 2,
and no folder is created outside the workspace. Every case drives the real CLI. No test points
at a system device: the character device is a pseudo-terminal the test opens itself, and the
"/dev/stdout" case is a link of the test's own to /proc/self/fd/1.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.exec_support import vtcode

SESSION = "out-1"
VTCODE = [sys.executable, "-m", "vtcode"]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with one finished session to export."""
    root = tmp_path_factory.mktemp("outpaths")
    ws = root / "ws"
    ws.mkdir()
    run = vtcode(
        ["-C", str(ws), "exec", "--script", "default", "--session-id", SESSION, "-q", "hi"], root
    )
    assert run.returncode == 0, run.stderr
    return ws


# The three commands whose output path is checked, each as argv builders for a given target.
Cmd = Callable[[Path, str], list[str]]
COMMANDS: dict[str, Cmd] = {
    "export -o": lambda ws, t: ["-C", str(ws), "sessions", "export", SESSION, "-o", t],
    "show --html": lambda ws, t: ["-C", str(ws), "sessions", "show", SESSION, "--html", t],
    "exec --last-message-file": lambda ws, t: [
        "-C",
        str(ws),
        "exec",
        "--script",
        "default",
        "-q",
        "--last-message-file",
        t,
        "hi",
    ],
    "exec --events": lambda ws, t: [
        "-C",
        str(ws),
        "exec",
        "--script",
        "default",
        "-q",
        "--events",
        t,
        "hi",
    ],
    "exec --record": lambda ws, t: [
        "-C",
        str(ws),
        "exec",
        "--script",
        "default",
        "-q",
        "--record",
        t,
        "hi",
    ],
}
ALL = list(COMMANDS)


def _sessions(ws: Path) -> set[str]:
    return {p.name for p in (ws / ".vtcode" / "sessions").iterdir() if not p.name.startswith(".")}


@pytest.mark.parametrize("cmd", ALL)
def test_regular_file_is_replaced(ws: Path, tmp_path: Path, cmd: str) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    run = vtcode(COMMANDS[cmd](ws, str(target)), tmp_path)
    assert run.returncode == 0, run.stderr
    assert target.read_text() not in ("", "old") or cmd == "exec --last-message-file"
    assert stat.S_ISREG(target.lstat().st_mode)


@pytest.mark.parametrize("cmd", ALL)
def test_symlink_to_regular_file_keeps_the_link(ws: Path, tmp_path: Path, cmd: str) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    run = vtcode(COMMANDS[cmd](ws, str(link)), tmp_path)
    assert run.returncode == 0, run.stderr
    assert link.is_symlink() and link.resolve() == real
    assert real.read_text() != "old"


@pytest.fixture
def fifo_reader(tmp_path: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A FIFO with a reader thread collecting everything written to it."""
    path = tmp_path / "pipe.fifo"
    os.mkfifo(path)
    got: list[bytes] = []

    def read() -> None:
        with path.open("rb") as f:  # blocks until the writer opens; EOF when it closes
            got.append(f.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    yield path, got
    if t.is_alive():  # nobody wrote: unblock the reader so the thread ends
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    t.join(timeout=10)


@pytest.mark.parametrize("cmd", ALL)
def test_fifo_is_written_through(
    ws: Path, tmp_path: Path, cmd: str, fifo_reader: tuple[Path, list[bytes]]
) -> None:
    path, got = fifo_reader
    run = vtcode(COMMANDS[cmd](ws, str(path)), tmp_path)
    assert run.returncode == 0, run.stderr
    assert stat.S_ISFIFO(path.lstat().st_mode)  # still a FIFO, not replaced by a file
    for _ in range(1000):
        if got:
            break
        threading.Event().wait(0.01)
    assert got and got[0], "nothing reached the FIFO's reader"


@pytest.mark.parametrize("cmd", ["export -o", "show --html"])
def test_character_device_is_written_through(ws: Path, tmp_path: Path, cmd: str) -> None:
    master, slave = os.openpty()
    try:
        name = os.ttyname(slave)
        before = os.stat(name)
        run = vtcode(COMMANDS[cmd](ws, name), tmp_path)
        assert run.returncode == 0, run.stderr
        after = os.stat(name)
        assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
        os.set_blocking(master, False)
        assert os.read(master, 65536)  # the bytes came out of the terminal's other end
    finally:
        os.close(master)
        os.close(slave)


def test_link_to_proc_stdout_appends_to_the_redirected_file(ws: Path, tmp_path: Path) -> None:
    """`-o /dev/stdout` with stdout redirected to a file: the file gets the export, stays the
    file the shell opened (not renamed over), and what was printed before is kept."""
    link = tmp_path / "stdout-link"
    link.symlink_to("/proc/self/fd/1")
    out = tmp_path / "captured.txt"
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(tmp_path / ".home")}
    with out.open("wb") as f:
        f.write(b"before\n")
        f.flush()
        inode = os.fstat(f.fileno()).st_ino
        proc = subprocess.run(
            [*VTCODE, "-C", str(ws), "sessions", "export", SESSION, "-o", str(link)],
            stdout=f,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
            check=False,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_ino == inode
    text = out.read_text()
    assert text.startswith("before\n") and '"thread.started"' in text
    assert link.is_symlink()


def _refused(run_rc: int, stderr: str, *words: str) -> None:
    assert run_rc == 2, stderr
    assert "Traceback" not in stderr
    for w in words:
        assert w in stderr, stderr


@pytest.mark.parametrize("cmd", ALL)
def test_missing_folder_outside_workspace_is_refused_and_not_created(
    ws: Path, tmp_path: Path, cmd: str
) -> None:
    before = _sessions(ws)
    target = tmp_path / "nowhere" / "deeper" / "out.jsonl"
    run = vtcode(COMMANDS[cmd](ws, str(target)), tmp_path)
    _refused(run.returncode, run.stderr, "does not exist")
    assert not (tmp_path / "nowhere").exists()
    assert _sessions(ws) == before  # refused before anything ran: no session


def test_missing_folder_inside_workspace_is_created(ws: Path, tmp_path: Path) -> None:
    target = ws / "reports" / "2026" / "export.jsonl"
    run = vtcode(COMMANDS["export -o"](ws, str(target)), tmp_path)
    assert run.returncode == 0, run.stderr
    assert target.is_file()


@pytest.mark.parametrize("cmd", ALL)
def test_link_inside_workspace_leading_outside_is_refused(
    ws: Path, tmp_path: Path, cmd: str
) -> None:
    """A model can plant `answer.txt -> /outside/file` in the workspace; vtcode must not follow."""
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    link = ws / f"planted-{cmd.replace(' ', '_')}.txt"
    link.symlink_to(outside)
    try:
        run = vtcode(COMMANDS[cmd](ws, str(link)), tmp_path)
        _refused(run.returncode, run.stderr, "leads outside")
        assert outside.read_text() == "keep me"
    finally:
        link.unlink()


def test_dangling_link_directory_and_socket_are_refused(ws: Path, tmp_path: Path) -> None:
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "missing-target")
    folder = tmp_path / "adir"
    folder.mkdir()
    sock_path = tmp_path / "s.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(sock_path))
    try:
        for target, word in (
            (dangling, "missing file"),
            (folder, "directory"),
            (sock_path, "socket"),
        ):
            run = vtcode(COMMANDS["export -o"](ws, str(target)), tmp_path)
            _refused(run.returncode, run.stderr, word)
        assert dangling.is_symlink() and not (tmp_path / "missing-target").exists()
        assert stat.S_ISSOCK(sock_path.lstat().st_mode)
    finally:
        srv.close()


def test_dash_writes_stdout(ws: Path, tmp_path: Path) -> None:
    run = vtcode(COMMANDS["show --html"](ws, "-"), tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.lstrip().lower().startswith("<!doctype html")
